package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
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
}

// toolRoutes are the tool APIs; a tool without a service, and every path
// no operation serves, get the generic tool answer.
func (s *Server) toolRoutes() {
	m := s.mux
	tasks.Mount(m, s, s.tasks)
	if s.forms != nil {
		s.formRoutes(m)
	}
	if s.links != nil {
		s.linkRoutes(m)
	}
	if s.sign != nil {
		s.signRoutes(m)
	}
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
