package app

import (
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/scim"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/web"
	"github.com/gatehouse/gatehouse/internal/webhooks"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// routes mounts every module on the kernel: the whole service on one
// screen. Each module's own routes are on one screen of its http.go (or
// pages.go); a module without a service (nil) mounts nothing.
func (a *App) routes(k *web.Server) {
	m := k.Mux()
	identity.Mount(m, k, a.Identity)   // /v1/auth/*, /v1/me/*
	workspace.Mount(m, k, a.Workspace) // /v1/orgs/*, /v1/invitations/*, /v1/me/discoverable
	oauth.Mount(m, k, a.OAuth)         // /.well-known/oauth-*, /oauth/register, /oauth/token, /oauth/device/authorization
	keys.Mount(m, a.Signer)            // /.well-known/jwks.json
	scim.Mount(m, k, a.SCIM)           // /v1/orgs/{id}/scim-tokens, /scim/v2/*
	sso.Mount(m, k, a.SSO)             // /v1/orgs/{id}/sso, /v1/sso/*
	pages.Mount(k.Pages(), k, pages.Deps{Identity: a.Identity, Workspace: a.Workspace, OAuth: a.OAuth, Forms: a.Forms, SCIM: a.SCIM, SSO: a.SSO, Brand: a.brand, Logger: a.log, Shown: a.shown})
	tasks.Mount(m, k, a.Tasks)       // /tasks/v1/
	links.Mount(m, k, a.Links)       // /links/v1/, /l/{code}
	forms.Mount(m, k, a.Forms)       // /forms/v1/, /forms/f/{id}
	sign.Mount(m, k, a.Sign)         // /sign/v1/
	webhooks.Mount(m, k, a.Webhooks) // /links/v1/webhooks, /sign/v1/webhooks
	mcp.Mount(m, k, a.MCP)           // GATEHOUSE_MCP_URL's path (/mcp)
	k.ToolFallbacks(workspace.Tools) // the rest of /{tool}/v1/: 401, 403 or 404
}
