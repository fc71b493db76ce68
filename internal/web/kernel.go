package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// What a module asks of the kernel when it mounts its routes. Each module
// declares the part it uses as its own small Kernel interface, so it never
// imports web; the func types below are aliases for the same reason.

// HandlerFunc is an endpoint that returns its error instead of writing it;
// the kernel writes the error in the API's shape.
type HandlerFunc = func(w http.ResponseWriter, r *http.Request) error

// AuthedFunc is an endpoint that needs a verified bearer token.
type AuthedFunc = func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error

// handlerFunc is HandlerFunc, by its older name inside this package.
type handlerFunc = HandlerFunc

// Public wraps an endpoint that needs no token: its error is written in the
// API's shape ({"error": ...} with the status of its kind).
func (s *Server) Public(h HandlerFunc) http.Handler { return s.handle(h) }

// Authed wraps an endpoint that needs a verified bearer access token.
func (s *Server) Authed(h AuthedFunc) http.Handler { return s.authed(h) }

// Pending is Authed that also lets in a session that owes its second
// factor (the step, the caller's description, token verification); every
// other wrapper answers such a session 403.
func (s *Server) Pending(h AuthedFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			return err
		}
		verified(r, p)
		return h(w, r, p)
	})
}

// Full wraps an endpoint that needs a full sign-in session that is still
// live: an API-key or OAuth token gets 403.
func (s *Server) Full(h AuthedFunc) http.Handler { return s.full("", h) }

// FullIn is Full for a route whose path parameter param names a workspace:
// an API-key or OAuth token of another workspace gets 404 there, as on
// every org route, because it reaches only its own.
func (s *Server) FullIn(param string, h AuthedFunc) http.Handler { return s.full(param, h) }

// Limiter returns the limiter called name, on the kernel's clock, allowing
// burst requests per key at once and one more per every; routes that ask
// for the same name (an API endpoint and its page) share its buckets, and
// so do the instances of a deployment when Config.Limits is set and the
// limiter refills no faster than ratelimit.SharedFrom. It
// is nil, which allows everything, when the service runs without abuse
// limits. Asking for a name again with other numbers is a programming
// error and panics.
func (s *Server) Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter {
	if !s.rateLimit {
		return nil
	}
	s.namedMu.Lock()
	defer s.namedMu.Unlock()
	spec := limitSpec{burst, every}
	if l, ok := s.named[name]; ok {
		if l.spec != spec {
			panic("web: limiter " + name + " asked for with other numbers")
		}
		return l.lim
	}
	l := namedLimiter{spec, s.limits.New(name, burst, every, s.now)}
	s.named[name] = l
	return l.lim
}

// limiterName is the name l was asked for by (Limiter).
func (s *Server) limiterName(l *ratelimit.Limiter) string {
	s.namedMu.Lock()
	defer s.namedMu.Unlock()
	for name, n := range s.named {
		if n.lim == l {
			return name
		}
	}
	return ""
}

type limitSpec struct {
	burst int
	every time.Duration
}

type namedLimiter struct {
	spec limitSpec
	lim  *ratelimit.Limiter
}

// PerIP wraps an endpoint that needs no token and limits it by client IP
// with l (429 with Retry-After when the IP has no token left).
func (s *Server) PerIP(l *ratelimit.Limiter, h HandlerFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if ok, wait := l.Allow(clientIP(r)); !ok {
			if rq := requestOf(r.Context()); rq != nil {
				rq.limiter = s.limiterName(l)
			}
			return gatehouse.TooMany(wait)
		}
		return h(w, r)
	})
}

// BodyLimit lets the route of pattern (as given to the mux, "POST /path")
// take bodies up to n bytes instead of MaxBody. Call it when mounting,
// before the server serves.
func (s *Server) BodyLimit(pattern string, n int64) { s.bodyLimits[pattern] = n }

// ClientIP is the address of r's client that limits and sessions record:
// the peer address, since Gatehouse does not trust forwarding headers
// (docs/decisions.md).
func (s *Server) ClientIP(r *http.Request) string { return clientIP(r) }

// SessionMeta is what a session records of the request that opens it.
func (s *Server) SessionMeta(r *http.Request) gatehouse.SessionMeta { return sessionMeta(r) }

// RequestID is the id ServeHTTP gave r (its X-Request-Id), for messages
// and logs about r.
func (s *Server) RequestID(r *http.Request) string { return requestID(r.Context()) }

// StatusOf is the HTTP status of an error of kind k, from the one table
// the API's errors use, for a module that answers errors in its own shape
// (the hosted pages).
func (s *Server) StatusOf(k gatehouse.Kind) int { return statusOf[k] }
