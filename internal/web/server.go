// Package web is the HTTP kernel of Gatehouse: ServeHTTP (request ids,
// body bounds, panics, clean URLs), the middleware modules mount their
// routes through (kernel.go), the named abuse limiters, the mapping of
// domain errors to statuses, and the routes file that lists every
// module's mount.
package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// Authenticator is what the kernel asks of the identity module: verify a
// bearer token into its principal, check that a full session is still live,
// and that a tool token's caller still stands in its workspace.
type Authenticator interface {
	Authenticate(raw string) (*gatehouse.Principal, error)
	LiveSession(ctx context.Context, p *gatehouse.Principal) error
	ToolAccess(ctx context.Context, p *gatehouse.Principal) error
}

// Config wires a Server.
type Config struct {
	Auth Authenticator
	// Health reports whether the service can answer (GET /health: 503
	// with its error); nil: always.
	Health    func(ctx context.Context) error
	Logger    *slog.Logger
	RateLimit bool
	Now       func() time.Time // clock of the rate limiters; nil: time.Now
	// ResourceMetadataURL is the RFC 9728 metadata URL of a tool API's
	// path, named in its 401 challenge; nil when no authorization server
	// is configured.
	ResourceMetadataURL func(path string) string
	// Issuer (GATEHOUSE_BASE_URL) is the resource a token bound to the
	// accounts API names; APIURL (GATEHOUSE_API_URL) the base of the tool
	// APIs' resources (RFC 8707). A token bound to resources reaches only
	// the APIs they name; unset, bound tokens reach none.
	Issuer, APIURL string
	// HSTS sends Strict-Transport-Security on every answer (the base URL
	// is https and GATEHOUSE_HSTS is not off).
	HSTS bool
	// Observer is told of every answered request and security event
	// (internal/metrics); nil: nobody.
	Observer Observer
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (GATEHOUSE_TRUSTED_PROXIES); empty: the peer is the client.
	TrustedProxies []netip.Prefix
	// Tracer starts each request's span (internal/tracing); nil: none.
	Tracer Tracer
	// Limits keeps the named limiters' buckets where every instance of
	// the deployment shares them (internal/ratelimit); nil: in memory.
	Limits *ratelimit.Shared
	// Ready reports whether the instance should be sent traffic (GET
	// /ready: 503 with its error, whose message is safe to show); nil:
	// Health.
	Ready func(ctx context.Context) error
}

// Observer watches the kernel: each answered request by its route pattern
// ("" when no route matched), method, status and duration, and each
// security event. It must not keep the attributes' values it does not
// know to be free of user data.
type Observer interface {
	Request(pattern, method string, status int, d time.Duration)
	Event(e gatehouse.SecurityEvent, attrs []slog.Attr)
}

// Tracer starts the span of a request, a child of its traceparent only
// when trusted; end names it by route pattern and status.
type Tracer interface {
	Request(r *http.Request, trusted bool) (context.Context, func(pattern string, status int))
}

// Server is the HTTP kernel: the modules mount their routes on Mux through
// its middleware (kernel.go), and ServeHTTP serves them all.
type Server struct {
	auth     Authenticator
	health   func(ctx context.Context) error
	log      *slog.Logger
	mux      *http.ServeMux
	metadata func(path string) string
	// issuer and apiURL are the resources of the accounts API and the
	// base of the tool APIs' (Config), without a trailing slash.
	issuer, apiURL string
	// rateLimit turns the abuse limits on (Limiter returns nil when off).
	rateLimit bool
	now       func() time.Time // clock of the rate limiters; nil: time.Now
	// bodyLimits are the routes (by pattern) whose bodies may exceed
	// MaxBody, and their own bound (BodyLimit).
	bodyLimits map[string]int64
	// named are the limiters modules asked for (Limiter), by name.
	named   map[string]namedLimiter
	namedMu sync.Mutex
	hsts    bool
	events  SecurityLog
	// pages are the routes mounted through Pages: HTML pages and their
	// assets, which the API document leaves out.
	pages map[string]bool
	// observer is Config.Observer; nil: nobody.
	observer Observer
	ready    func(ctx context.Context) error
	trusted  []netip.Prefix
	limits   *ratelimit.Shared
	tracer   Tracer
}

// NewServer returns the kernel with its own routes (GET /health, GET
// /openapi.json); the modules mount theirs on Mux.
func NewServer(c Config) *Server {
	s := &Server{auth: c.Auth, health: c.Health, log: c.Logger, mux: http.NewServeMux(), metadata: c.ResourceMetadataURL,
		rateLimit: c.RateLimit, now: c.Now, bodyLimits: map[string]int64{}, named: map[string]namedLimiter{}, hsts: c.HSTS, pages: map[string]bool{},
		issuer: strings.TrimRight(c.Issuer, "/"), apiURL: strings.TrimRight(c.APIURL, "/")}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.events = SecurityLog{Log: s.log, Observer: c.Observer}
	s.observer = c.Observer
	if s.health == nil {
		s.health = func(context.Context) error { return nil }
	}
	s.ready = c.Ready
	s.trusted = c.TrustedProxies
	s.limits = c.Limits
	s.tracer = c.Tracer
	if s.ready == nil {
		s.ready = s.health
	}
	s.routes()
	return s
}

// Mux is the router the modules mount their routes on.
func (s *Server) Mux() *http.ServeMux { return s.mux }

// Pages is the router the hosted pages mount on: the same mux, but each
// pattern is remembered as a page (IsPage), which the API document leaves
// out (docs/decisions.md), so no list of page routes is kept by hand.
func (s *Server) Pages() PageMux { return PageMux{s} }

// PageMux mounts page routes on the server's mux (Server.Pages).
type PageMux struct{ s *Server }

// Handle mounts a page route.
func (m PageMux) Handle(pattern string, h http.Handler) {
	m.s.pages[pattern] = true
	m.s.mux.Handle(pattern, h)
}

// HandleFunc mounts a page route.
func (m PageMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// IsPage reports whether the route pattern was mounted through Pages.
func (s *Server) IsPage(pattern string) bool { return s.pages[pattern] }

// PagePatterns lists the route patterns mounted through Pages, sorted, so
// a test can reach every page route without a list kept by hand.
func (s *Server) PagePatterns() []string {
	out := make([]string, 0, len(s.pages))
	for p := range s.pages {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authed verifies the bearer access token before calling h; a session
// that owes its second factor is refused here, for every route but the
// few mounted with Pending. So is an OAuth token meant for the tool APIs
// only: one bound to resources that do not include the accounts API (401
// invalid_token, RFC 8707), or one that asked for tool scopes (403
// insufficient_scope: those scopes reach the tool APIs alone). The routes
// mounted with Pending (the caller's description, token verification)
// accept them.
func (s *Server) authed(h AuthedFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			return err
		}
		verified(r, p)
		if p.Pending {
			return gatehouse.ErrSecondFactor
		}
		if !s.reachesAccounts(p) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+errOtherResource.Message+`"`)
			return errOtherResource
		}
		if gatehouse.ToolScoped(p.Scope) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", error_description="`+errToolScoped.Message+`"`)
			return errToolScoped
		}
		return h(w, r, p)
	})
}

// errToolScoped refuses, on the accounts API, a token that asked for tool
// scopes.
var errToolScoped = gatehouse.Errorf(gatehouse.KindForbidden, "this access token's scope reaches the tool APIs only")

// full is authed for operations that need a full sign-in session that is
// still live (one read of the session); orgParam, when not empty, is the
// path parameter naming the workspace the operation acts on
// (gatehouse.Principal.RequireFull).
func (s *Server) full(orgParam string, h AuthedFunc) http.Handler {
	return s.authed(func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
		org := ""
		if orgParam != "" {
			org = r.PathValue(orgParam)
		}
		if err := p.RequireFull(org); err != nil {
			return err
		}
		// A full session's token is checked against its session, so it
		// cannot outlive a sign-out or revocation.
		if err := s.auth.LiveSession(r.Context(), p); err != nil {
			return err
		}
		return h(w, r, p)
	})
}

func (s *Server) principal(r *http.Request) (*gatehouse.Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, raw, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return nil, gatehouse.Errorf(gatehouse.KindUnauthorized, "missing bearer token")
	}
	return s.auth.Authenticate(strings.TrimSpace(raw))
}

// HSTS is the Strict-Transport-Security of every answer when the base
// URL is https: two years, subdomains included.
const HSTS = "max-age=63072000; includeSubDomains"

// DefaultCSP is the Content-Security-Policy of every answer whose handler
// sets none (JSON, redirects, errors): nothing may load, nothing may frame
// it. The pages set their own, as strict, over it.
const DefaultCSP = "default-src 'none'; frame-ancestors 'none'"

// harden sets the security headers of every answer before its handler
// runs, so a handler that writes a page replaces the CSP and referrer
// policy with its own, and no answer, an error or a 404 included, goes
// out without them.
func (s *Server) harden(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", DefaultCSP)
	h.Set("Referrer-Policy", "no-referrer")
	if s.hsts {
		h.Set("Strict-Transport-Security", HSTS)
	}
}

// ServeHTTP adds a request id and the security headers, bounds the body,
// recovers panics, and answers unknown routes and wrong methods with JSON
// errors.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	w.Header().Set("X-Request-Id", id)
	s.harden(w.Header())
	conn := w // MaxBytesReader tells the connection's writer to close it
	var start time.Time
	if s.observer != nil || s.tracer != nil {
		start = time.Now()
	}
	// The server span's context goes into the one copy of r that
	// withRequest makes.
	ctx, traced := r.Context(), (func(pattern string, status int))(nil)
	if s.tracer != nil {
		ctx, traced = s.tracer.Request(r, len(s.trusted) > 0 && s.isTrusted(peerIP(r)))
	}
	w, r = withRequest(w, r, ctx, id, s.clientIP(r))
	if al := r.Header.Get("Accept-Language"); al != "" {
		// The language of mail this request causes to a person with no
		// preference (i18n.For); the API's own answers stay English.
		r = r.WithContext(i18n.WithRequest(r.Context(), al))
	}
	pattern := ""
	if s.observer != nil || s.tracer != nil {
		defer func() {
			status := http.StatusOK
			if rq := requestOf(r.Context()); rq != nil {
				status = cmp.Or(rq.w.status, http.StatusOK)
			}
			if traced != nil {
				traced(pattern, status)
			}
			if s.observer != nil {
				s.observer.Request(pattern, r.Method, status, time.Since(start))
			}
		}()
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "request_id", id, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			httpjson.Write(w, http.StatusInternalServerError, errorBody{"internal server error (request id " + id + ")"})
		}
	}()
	if !gatehouse.CleanText(r.URL.Path) || !cleanQuery(r.URL.RawQuery) {
		// PostgreSQL text holds neither NUL nor invalid UTF-8: refuse them
		// before they reach a query.
		httpjson.Write(w, http.StatusBadRequest, errorBody{"the URL must be valid UTF-8 without NUL characters"})
		return
	}
	h, pattern := s.mux.Handler(r)
	limit, ok := s.bodyLimits[pattern]
	if !ok {
		limit = MaxBody
	}
	r.Body = http.MaxBytesReader(conn, r.Body, limit)
	if pattern == "" {
		// No route: the mux answers 404 or 405 (with Allow) in plain text;
		// keep its status and headers, answer in JSON.
		rec := &statusOnly{header: w.Header()}
		h.ServeHTTP(rec, r)
		msg := "not found"
		if rec.status == http.StatusMethodNotAllowed {
			msg = "method " + r.Method + " not allowed"
		}
		httpjson.Write(w, rec.status, errorBody{msg})
		return
	}
	s.mux.ServeHTTP(w, r)
	s.refusedElsewhere(r)
}

// statusOnly records a status and discards the body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}
func (s *statusOnly) WriteHeader(code int) { s.status = code }

// clientIP is the client address ServeHTTP found for r (Server.clientIP),
// else r's peer.
func clientIP(r *http.Request) string {
	if rq := requestOf(r.Context()); rq != nil {
		return rq.ip
	}
	return peerIP(r)
}

// clientIP is r's client: its peer, unless the peer is a trusted proxy;
// then the nearest address of X-Forwarded-For that is not one (read from
// the right: the addresses left of it are the client's own word). A peer
// outside the trusted proxies has its forwarding headers ignored.
func (s *Server) clientIP(r *http.Request) string {
	peer := peerIP(r)
	if len(s.trusted) == 0 || !s.isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(hop)
		if err != nil {
			return peer // a malformed hop: trust nothing beyond the proxy
		}
		if !s.isTrusted(a.String()) {
			return a.Unmap().String()
		}
	}
	return peer
}

func (s *Server) isTrusted(ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerIP is the address of r's peer.
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func sessionMeta(r *http.Request) gatehouse.SessionMeta {
	return gatehouse.SessionMeta{UserAgent: r.UserAgent(), IP: clientIP(r)}
}

// cleanQuery reports whether every decoded key and value of a raw query is
// clean text; a query that does not parse is left to its handler.
func cleanQuery(raw string) bool {
	q, err := url.ParseQuery(raw)
	return err != nil || gatehouse.CleanValues(q, 0)
}
