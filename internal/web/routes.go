package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/webhooks"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// routes is the whole API on one screen.
func (s *Server) routes() {
	m := s.mux
	m.Handle("GET /health", s.handle(s.handleHealth))
	m.HandleFunc("GET /openapi.json", handleOpenAPI)

	identity.Mount(m, s, s.svc)
	workspace.Mount(m, s, s.svc)

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

// handleHealth handles "GET /health": 200 while the database answers, 503
// when it does not.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Health(r.Context()); err != nil {
		s.log.Warn("health: database not answering", "err", err)
		httpjson.Write(w, http.StatusServiceUnavailable, errorBody{"database is not answering"})
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	return nil
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
