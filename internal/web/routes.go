package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/pages"
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

	// Abuse limits are named kernel limiters (numbers and reasons in
	// docs/decisions.md); the hosted pages ask for login, magic,
	// magicPerEmail and verify too, and share their buckets.
	m.Handle("POST /v1/auth/register", s.PerIP(s.Limiter("register", 20, time.Minute), s.handleRegister))
	m.Handle("POST /v1/auth/login", s.PerIP(s.Limiter("login", 30, 2*time.Second), s.handleLogin))
	m.Handle("POST /v1/auth/magic-link", s.PerIP(s.Limiter("magic", 10, time.Minute), s.handleMagicLink))
	m.Handle("POST /v1/auth/magic-link/verify", s.PerIP(s.Limiter("verify", 30, 2*time.Second), s.handleMagicLinkVerify))
	m.Handle("POST /v1/auth/verify-email", s.PerIP(s.Limiter("verify", 30, 2*time.Second), s.handleVerifyEmail))
	m.Handle("POST /v1/auth/refresh", s.handle(s.handleRefresh))
	m.Handle("POST /v1/auth/logout", s.handle(s.handleLogout))
	m.Handle("POST /v1/auth/switch-org", s.authed(s.handleSwitchOrg))
	m.Handle("GET /v1/auth/me", s.authed(s.handleMe))
	m.Handle("GET /v1/auth/verify", s.authed(s.handleVerify))
	m.Handle("POST /v1/auth/token", s.PerIP(s.Limiter("keyExchange", 300, 100*time.Millisecond), s.handleKeyExchange))

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
	pages.Mount(m, s, pages.Deps{Accounts: s.svc, OAuth: s.oauth, Forms: s.forms, Logger: s.log})
	s.toolRoutes()
}

// oauthRoutes are the authorization server's JSON endpoints (RFC 6749
// error bodies from internal/oauth) and the protected resource metadata;
// its consent and device pages are internal/pages'.
func (s *Server) oauthRoutes() {
	m, o := s.mux, s.oauth
	m.Handle("GET /.well-known/oauth-authorization-server", o.HandleMetadata())
	m.Handle("GET /.well-known/oauth-protected-resource", o.HandleResourceMetadata())
	m.Handle("GET /.well-known/oauth-protected-resource/{rest...}", o.HandleResourceMetadata())
	m.Handle("POST /oauth/register", s.oauthLimited(s.Limiter("oauthRegister", 20, time.Minute), o.HandleRegister()))
	m.Handle("POST /oauth/token", s.oauthLimited(s.Limiter("oauthToken", 300, 100*time.Millisecond), o.HandleToken()))
	m.Handle("POST /oauth/device/authorization", s.oauthLimited(s.Limiter("oauthToken", 300, 100*time.Millisecond), o.HandleDeviceAuthorization()))
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/{rest...}", "/oauth/register", "/oauth/token", "/oauth/device/authorization"} {
		m.Handle("OPTIONS "+p, o.HandlePreflight())
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
func (s *Server) oauthLimited(l *ratelimit.Limiter, h http.Handler) http.Handler {
	if l == nil {
		return h
	}
	return s.oauth.Limit(func(r *http.Request) (bool, time.Duration) { return l.Allow(clientIP(r)) }, h)
}
