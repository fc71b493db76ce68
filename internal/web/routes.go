package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// routes is the whole API on one screen.
func (s *Server) routes() {
	m := s.mux
	m.Handle("GET /health", s.handle(s.handleHealth))
	m.HandleFunc("GET /openapi.json", handleOpenAPI)

	m.Handle("POST /v1/auth/register", s.perIP(func(l *limits) *ratelimit.Limiter { return l.register }, s.handleRegister))
	m.Handle("POST /v1/auth/login", s.perIP(func(l *limits) *ratelimit.Limiter { return l.login }, s.handleLogin))
	m.Handle("POST /v1/auth/magic-link", s.perIP(func(l *limits) *ratelimit.Limiter { return l.magic }, s.handleMagicLink))
	m.Handle("POST /v1/auth/magic-link/verify", s.perIP(func(l *limits) *ratelimit.Limiter { return l.verify }, s.handleMagicLinkVerify))
	m.Handle("POST /v1/auth/verify-email", s.perIP(func(l *limits) *ratelimit.Limiter { return l.verify }, s.handleVerifyEmail))
	m.Handle("POST /v1/auth/refresh", s.handle(s.handleRefresh))
	m.Handle("POST /v1/auth/logout", s.handle(s.handleLogout))
	m.Handle("POST /v1/auth/switch-org", s.authed(s.handleSwitchOrg))
	m.Handle("GET /v1/auth/me", s.authed(s.handleMe))
	m.Handle("GET /v1/auth/verify", s.authed(s.handleVerify))
	m.Handle("POST /v1/auth/token", s.perIP(func(l *limits) *ratelimit.Limiter { return l.keyExchange }, s.handleKeyExchange))

	m.Handle("PATCH /v1/me", s.authed(s.handlePatchMe))
	m.Handle("DELETE /v1/me", s.Full(s.handleDeleteMe))
	m.Handle("POST /v1/me/password", s.Full(s.handlePassword))
	m.Handle("POST /v1/me/verify-email/resend", s.Full(s.handleResend))
	m.Handle("GET /v1/me/orgs", s.authed(s.handleMyOrgs))
	m.Handle("GET /v1/me/sessions", s.Full(s.handleSessions))
	m.Handle("DELETE /v1/me/sessions/{sid}", s.Full(s.handleDeleteSession))
	m.Handle("GET /v1/me/grants", s.Full(s.handleGrants))
	m.Handle("DELETE /v1/me/grants/{gid}", s.Full(s.handleDeleteGrant))
	m.Handle("GET /v1/me/api-keys", s.Full(s.handleUserKeys))
	m.Handle("POST /v1/me/api-keys", s.Full(s.handleCreateUserKey))
	m.Handle("DELETE /v1/me/api-keys/{kid}", s.Full(s.handleDeleteUserKey))
	m.Handle("GET /v1/me/discoverable", s.authed(s.handleDiscoverable))
	m.Handle("POST /v1/me/discoverable/join", s.authed(s.handleJoinDiscoverable))

	m.Handle("POST /v1/orgs", s.authed(s.handleCreateOrg))
	m.Handle("GET /v1/orgs/{id}", s.authed(s.handleOrg))
	m.Handle("PATCH /v1/orgs/{id}", s.authed(s.handleUpdateOrg))
	m.Handle("DELETE /v1/orgs/{id}", s.FullIn("id", s.handleDeleteOrg))
	m.Handle("GET /v1/orgs/{id}/members", s.authed(s.handleOrgMembers))
	m.Handle("PATCH /v1/orgs/{id}/members/{uid}", s.authed(s.handleSetMemberRole))
	m.Handle("DELETE /v1/orgs/{id}/members/{uid}", s.authed(s.handleRemoveMember))
	m.Handle("GET /v1/orgs/{id}/invitations", s.FullIn("id", s.handleInvitations))
	m.Handle("POST /v1/orgs/{id}/invitations", s.FullIn("id", s.handleInvite))
	m.Handle("DELETE /v1/orgs/{id}/invitations/{iid}", s.FullIn("id", s.handleRevokeInvitation))
	m.Handle("GET /v1/invitations/{token}", s.handle(s.handlePreviewInvitation))
	m.Handle("POST /v1/invitations/{token}/accept", s.Full(s.handleAcceptInvitation))

	m.Handle("GET /v1/orgs/{id}/teams", s.authed(s.handleTeams))
	m.Handle("POST /v1/orgs/{id}/teams", s.authed(s.handleCreateTeam))
	m.Handle("PATCH /v1/orgs/{id}/teams/{tid}", s.authed(s.handlePatchTeam))
	m.Handle("DELETE /v1/orgs/{id}/teams/{tid}", s.authed(s.handleDeleteTeam))
	m.Handle("GET /v1/orgs/{id}/teams/{tid}/members", s.authed(s.handleTeamMembers))
	m.Handle("POST /v1/orgs/{id}/teams/{tid}/members", s.authed(s.handleSetTeamMember))
	m.Handle("DELETE /v1/orgs/{id}/teams/{tid}/members/{uid}", s.authed(s.handleRemoveTeamMember))
	m.Handle("GET /v1/orgs/{id}/tools", s.authed(s.handleTools))
	m.Handle("PUT /v1/orgs/{id}/tools", s.authed(s.handleSetTool))
	m.Handle("GET /v1/orgs/{id}/api-keys", s.FullIn("id", s.handleOrgKeys))
	m.Handle("POST /v1/orgs/{id}/api-keys", s.FullIn("id", s.handleCreateOrgKey))
	m.Handle("DELETE /v1/orgs/{id}/api-keys/{kid}", s.FullIn("id", s.handleDeleteOrgKey))
	m.Handle("GET /v1/orgs/{id}/audit", s.authed(s.handleAudit))
	m.Handle("GET /v1/orgs/{id}/domains", s.authed(s.handleDomains))
	m.Handle("POST /v1/orgs/{id}/domains", s.authed(s.handleClaimDomain))
	m.Handle("PATCH /v1/orgs/{id}/domains/{did}", s.authed(s.handlePatchDomain))
	m.Handle("DELETE /v1/orgs/{id}/domains/{did}", s.authed(s.handleDeleteDomain))
	m.Handle("POST /v1/orgs/{id}/domains/{did}/verify", s.authed(s.handleVerifyDomain))

	if s.oauth != nil {
		s.oauthRoutes()
	}
	s.pageRoutes()
	s.toolRoutes()
}

// oauthRoutes are the authorization server (RFC 6749 error bodies from
// internal/oauth), the protected resource metadata, and its consent and
// device pages (HTML; every form POST behind CrossOriginProtection).
func (s *Server) oauthRoutes() {
	m, o, form := s.mux, s.oauth, s.form
	m.Handle("GET /.well-known/oauth-authorization-server", o.HandleMetadata())
	m.Handle("GET /.well-known/oauth-protected-resource", o.HandleResourceMetadata())
	m.Handle("GET /.well-known/oauth-protected-resource/{rest...}", o.HandleResourceMetadata())
	m.Handle("POST /oauth/register", s.oauthLimited(func(l *limits) *ratelimit.Limiter { return l.oauthRegister }, o.HandleRegister()))
	m.Handle("POST /oauth/token", s.oauthLimited(func(l *limits) *ratelimit.Limiter { return l.oauthToken }, o.HandleToken()))
	m.Handle("POST /oauth/device/authorization", s.oauthLimited(func(l *limits) *ratelimit.Limiter { return l.oauthToken }, o.HandleDeviceAuthorization()))
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/{rest...}", "/oauth/register", "/oauth/token", "/oauth/device/authorization"} {
		m.Handle("OPTIONS "+p, o.HandlePreflight())
	}
	m.HandleFunc("GET /oauth/authorize", s.handleAuthorize)
	m.Handle("POST /oauth/authorize", form(s.handleAuthorizeDecision))
	m.HandleFunc("GET /device", s.handleDevicePage)
	m.Handle("POST /device", form(s.handleDeviceDecision))
}

// pageRoutes are the hosted pages that need no authorization server (HTML;
// every form POST behind CrossOriginProtection).
func (s *Server) pageRoutes() {
	m, form := s.mux, s.form
	m.HandleFunc("GET /signin", s.handleSignInPage)
	m.Handle("POST /signin", form(s.handleSignIn))
	m.Handle("POST /signin/magic", form(s.handleSignInMagic))
	m.Handle("POST /signout", form(s.handleSignOut))
	m.HandleFunc("GET /auth/magic", s.handleMagicPage)
	m.Handle("POST /auth/magic", form(s.handleMagic))
	m.HandleFunc("GET /verify-email", s.handleVerifyEmailPage)
	m.Handle("POST /verify-email", form(s.handleVerifyEmailForm))
	m.HandleFunc("GET /invite", s.handleInvitePage)
	m.Handle("POST /invite", form(s.handleInviteAccept))
	m.HandleFunc("GET /assets/gatehouse.css", s.handleStylesheet)
	if s.forms != nil {
		m.HandleFunc("GET /forms"+forms.ConfirmPath, s.handleFormConfirmPage)
		m.Handle("POST /forms"+forms.ConfirmPath, form(s.handleFormConfirm))
	}
}

// toolRoutes are the tool APIs; a tool without a service, and every path
// no operation serves, get the generic tool answer.
func (s *Server) toolRoutes() {
	m := s.mux
	tasks.Mount(m, s, s.tasks)
	links.Mount(m, s, s.links)
	forms.Mount(m, s, s.forms)
	sign.Mount(m, s, s.sign)
	webhooks.Mount(m, s, s.webhooks)
	for _, tool := range accounts.Tools {
		m.Handle("/"+tool+"/v1/", s.handleToolAPI(tool))
	}
}

// handleOpenAPI handles "GET /openapi.json": the OpenAPI document of the
// whole API (api/openapi.json), the same for every caller, so cacheable.
func handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(api.Document())
}

// Route is the pattern of the route that serves r ("GET /v1/orgs/{id}"),
// or "" when no route does (the answer is 404 or 405). The end-to-end
// tests use it to find the operation of the OpenAPI document that a
// response must match.
func (s *Server) Route(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	return pattern
}

// oauthLimited limits an OAuth endpoint per client IP, answering in the
// OAuth error shape.
func (s *Server) oauthLimited(pick func(*limits) *ratelimit.Limiter, h http.Handler) http.Handler {
	if s.limits == nil {
		return h
	}
	return s.oauth.Limit(func(r *http.Request) (bool, time.Duration) { return pick(s.limits).Allow(clientIP(r)) }, h)
}

// form guards a hosted-page form POST: cross-origin browser requests are
// refused (http.CrossOriginProtection: Sec-Fetch-Site, then Origin) with the
// error page, and so are fields that are not clean text or too long to be
// any of the pages' values.
func (s *Server) form(h http.HandlerFunc) http.Handler {
	return s.csrf.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || !gatehouse.CleanValues(r.Form, maxFormValue) {
			s.render(w, http.StatusBadRequest, "error", &page{Title: "Request refused",
				Message: "This form could not be read. Go back to the page and try again."})
			return
		}
		h(w, r)
	}))
}

// maxFormValue bounds a hosted-page form value: tokens, codes, emails,
// passwords and return paths are all far shorter.
const maxFormValue = 4096
