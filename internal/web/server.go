// Package web is the HTTP edge of Gatehouse: routing, decoding, the mapping
// of domain errors to statuses, and the abuse limits.
package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/forms"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/links"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// Config wires a Server.
type Config struct {
	Service   *accounts.Service
	Logger    *slog.Logger
	RateLimit bool
	Now       func() time.Time // clock of the rate limiter; nil: time.Now
	// OAuth is the authorization server; its issuer (GATEHOUSE_BASE_URL)
	// also decides whether cookies can be Secure. Nil leaves out its
	// endpoints and pages; the other pages and the tools stay.
	OAuth *oauth.Server
	// Tasks is the Tasks tool API; nil leaves its paths to the generic
	// tool answer.
	Tasks *tasks.Service
	// Forms is the Forms tool API; nil leaves its paths to the generic
	// tool answer.
	Forms *forms.Service
	// Links is the Links tool API; nil leaves its paths to the generic
	// tool answer.
	Links *links.Service
	// Sign is the Sign tool API; nil leaves its paths to the generic
	// tool answer.
	Sign *sign.Service
	// Webhooks manages the tools' webhooks (Links, Sign).
	Webhooks *webhooks.Service
}

// Server serves the whole HTTP API.
type Server struct {
	svc    *accounts.Service
	log    *slog.Logger
	limits *limits
	mux    *http.ServeMux
	oauth  *oauth.Server
	pages  map[string]*template.Template
	secure bool // Secure cookies; false only on plain-http loopback
	csrf   *http.CrossOriginProtection
	now    func() time.Time // clock of the rate limiters; nil: time.Now
	// bodyLimits are the routes (by pattern) whose bodies may exceed
	// MaxBody, and their own bound (BodyLimit).
	bodyLimits map[string]int64
	// named are the limiters modules asked for (Limiter), by name.
	named    map[string]namedLimiter
	namedMu  sync.Mutex
	tasks    *tasks.Service
	forms    *forms.Service
	links    *links.Service
	webhooks *webhooks.Service
	sign     *sign.Service
}

// NewServer returns the HTTP handler of the whole service.
func NewServer(c Config) http.Handler {
	s := &Server{svc: c.Service, log: c.Logger, mux: http.NewServeMux(), oauth: c.OAuth, tasks: c.Tasks, forms: c.Forms, links: c.Links, webhooks: c.Webhooks, sign: c.Sign,
		pages: parsePages(), secure: true, csrf: http.NewCrossOriginProtection(), now: c.Now, bodyLimits: map[string]int64{}, named: map[string]namedLimiter{}}
	if s.oauth != nil {
		s.secure = secureCookies(s.oauth.Issuer())
	}
	s.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, http.StatusForbidden, "error", &page{Title: "Request refused",
			Message: "This form was sent from another site. Go back to the page and try again."})
	}))
	if s.log == nil {
		s.log = slog.Default()
	}
	if c.RateLimit {
		s.setLimits()
	}
	s.routes()
	return s
}

func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authed verifies the bearer access token before calling h.
func (s *Server) authed(h AuthedFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			return err
		}
		return h(w, r, p)
	})
}

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
		if err := s.svc.LiveSession(r.Context(), p); err != nil {
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
	return s.svc.Authenticate(strings.TrimSpace(raw))
}

type ctxKey int

const requestIDKey ctxKey = 0

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// ServeHTTP adds a request id, bounds the body, recovers panics, and answers
// unknown routes and wrong methods with JSON errors.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
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
	r.Body = http.MaxBytesReader(w, r.Body, limit)
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

// clientIP is the peer address of r. Gatehouse does not trust forwarding
// headers (docs/decisions.md).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func sessionMeta(r *http.Request) accounts.SessionMeta {
	return accounts.SessionMeta{UserAgent: r.UserAgent(), IP: clientIP(r)}
}

// limits are the abuse limits of the unauthenticated endpoints that are
// not yet named limiters (Limiter).
type limits struct {
	// The sign-in pages' limits, the named limiters of the same name that
	// the identity API routes ask for, so an address has one budget for
	// the API and its page.
	login, magic, magicPerEmail, verify *ratelimit.Limiter
	// OAuth: client registration writes a row per call; token and device
	// authorization are cheap, bounded like key exchange.
	oauthRegister, oauthToken *ratelimit.Limiter
	// Public form submissions: a site's visitors share nothing but the
	// form, so the limit is per IP and generous.
	formSubmit *ratelimit.Limiter
	// Wrong user codes typed on the device page, per IP and per browser
	// session (RFC 8628 §5.1), keyed "ip …" and "session …".
	failedDeviceCodes *ratelimit.Limiter
}

// setLimits sets the abuse limits; docs/decisions.md gives the reasons.
func (s *Server) setLimits() {
	now := s.now
	s.limits = &limits{
		oauthRegister: ratelimit.New(20, time.Minute, now),
		oauthToken:    ratelimit.New(300, 100*time.Millisecond, now),
		formSubmit:    ratelimit.New(30, 2*time.Second, now),

		failedDeviceCodes: ratelimit.New(10, time.Minute, now),
	}
	s.limits.login = s.Limiter("login", 30, 2*time.Second)
	s.limits.magic = s.Limiter("magic", 10, time.Minute)
	s.limits.magicPerEmail = s.Limiter("magicPerEmail", 5, 2*time.Minute)
	s.limits.verify = s.Limiter("verify", 30, 2*time.Second)
}

// perIP limits h by client IP with the limiter that pick selects.
func (s *Server) perIP(pick func(*limits) *ratelimit.Limiter, h handlerFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if s.limits != nil {
			if ok, wait := pick(s.limits).Allow(clientIP(r)); !ok {
				return gatehouse.TooMany(wait)
			}
		}
		return h(w, r)
	})
}

// cleanQuery reports whether every decoded key and value of a raw query is
// clean text; a query that does not parse is left to its handler.
func cleanQuery(raw string) bool {
	q, err := url.ParseQuery(raw)
	return err != nil || gatehouse.CleanValues(q, 0)
}
