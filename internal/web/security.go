package web

import (
	"context"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
)

// request is what the kernel knows of a request, kept in its context from
// ServeHTTP on: the security events about it (SecurityLog.Event) name its
// id, client and, once a bearer token was verified, its user.
type request struct {
	id, ip, ua string
	user       string // set by the token middleware once verified
	limiter    string // the PerIP limiter that refused it
	logged     bool   // its refusal was logged (refused)
	// w records the answer's status, for the refusals written elsewhere
	// than writeError (the pages, OAuth's own answers): one allocation
	// with the record.
	w statusWriter
}

// statusWriter is a ResponseWriter that records the status of the answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type ctxKey int

const requestKey ctxKey = 0

func requestOf(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey).(*request)
	return rq
}

func requestID(ctx context.Context) string {
	if rq := requestOf(ctx); rq != nil {
		return rq.id
	}
	return ""
}

// maxUserAgent bounds the user agent a security event quotes.
const maxUserAgent = 256

// SecurityLog writes the security events (gatehouse.SecurityEvent) as
// structured log lines: event=<name>, the request's id, client IP and
// user agent from the context ServeHTTP gave the request, the user when
// known, then attrs. Its zero value logs to slog.Default. slog's handlers
// quote every value, so a user agent or address holding a newline cannot
// forge a line.
type SecurityLog struct {
	Log *slog.Logger
	// Observer counts the events (internal/metrics); nil: nobody.
	Observer Observer
}

// Event logs e about the request of ctx: at Info when it records an
// accepted credential, at Warn otherwise. attrs name the method or reason
// and never a secret; a user_id among them wins over the request's.
func (l SecurityLog) Event(ctx context.Context, e gatehouse.SecurityEvent, attrs ...slog.Attr) {
	if l.Observer != nil {
		l.Observer.Event(e, attrs)
	}
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	level := slog.LevelWarn
	if e.Success() {
		level = slog.LevelInfo
	}
	out := make([]slog.Attr, 0, 5+len(attrs))
	out = append(out, slog.String("event", string(e)))
	if rq := requestOf(ctx); rq != nil {
		out = append(out, slog.String("request_id", rq.id), slog.String("ip", rq.ip), slog.String("user_agent", rq.ua))
		if rq.user != "" && !hasAttr(attrs, "user_id") {
			out = append(out, slog.String("user_id", rq.user))
		}
	}
	out = append(out, attrs...)
	log.LogAttrs(ctx, level, "security event", out...)
}

func hasAttr(attrs []slog.Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// withRequest is r with context ctx (r's own, or its server span's)
// carrying its request record, and w recording the status of its answer.
func withRequest(w http.ResponseWriter, r *http.Request, ctx context.Context, id, ip string) (http.ResponseWriter, *http.Request) {
	ua := r.UserAgent()
	if len(ua) > maxUserAgent {
		n := maxUserAgent
		for n > 0 && !utf8.RuneStart(ua[n]) {
			n--
		}
		ua = ua[:n]
	}
	rq := &request{id: id, ip: ip, ua: ua, w: statusWriter{ResponseWriter: w}}
	return &rq.w, r.WithContext(context.WithValue(ctx, requestKey, rq))
}

// refusedElsewhere logs the refusal of r when its answer was a 401, 403
// or 429 that writeError did not write (and so did not log): a page's, or
// an OAuth endpoint's in RFC 6749's shape.
func (s *Server) refusedElsewhere(r *http.Request) {
	rq := requestOf(r.Context())
	if rq == nil || rq.logged {
		return
	}
	switch rq.w.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		s.refused(r, rq.w.status, "")
	}
}

// verified records p's user as the request's, for the events about it.
func verified(r *http.Request, p *gatehouse.Principal) {
	if rq := requestOf(r.Context()); rq != nil && p != nil {
		rq.user = p.UserID
	}
}

// refused logs the refusal of r answered with status: 401 and 403 as
// EventRefused, 429 as EventRateLimited; reason is the answer's message
// ("" when the kernel did not write it).
func (s *Server) refused(r *http.Request, status int, reason string) {
	rq := requestOf(r.Context())
	if rq != nil {
		rq.logged = true
	}
	attrs := []slog.Attr{slog.Int("status", status), slog.String("http_method", r.Method), slog.String("path", r.URL.Path)}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", clip(reason)))
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		s.events.Event(r.Context(), gatehouse.EventRefused, attrs...)
	case http.StatusTooManyRequests:
		if rq != nil && rq.limiter != "" {
			attrs = append(attrs, slog.String("limiter", rq.limiter))
		}
		s.events.Event(r.Context(), gatehouse.EventRateLimited, attrs...)
	}
}
