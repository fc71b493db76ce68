package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// Error is an OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8628
// §3.5): a code, a description safe to show, and the HTTP status.
type Error struct {
	Code        string
	Description string
	Status      int
	RetryAfter  time.Duration // sent as Retry-After when set (429)
	Err         error         // internal cause, logged, never shown
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Description + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Description
}

func (e *Error) Unwrap() error { return e.Err }

func oauthErr(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Description: descriptionText(fmt.Sprintf(format, args...))}
}

// descriptionText keeps error_description within the characters RFC 6749
// §5.2 allows (printable ASCII but the double quote and backslash), whatever
// a client sent that is quoted in it: double quotes become single ones,
// anything else outside becomes ?.
func descriptionText(s string) string {
	if len(s) > 512 {
		s = s[:512] + "..."
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\' || r < 0x20 || r > 0x7e:
			return '?'
		}
		return r
	}, s)
}

func invalidRequest(format string, args ...any) *Error {
	return oauthErr("invalid_request", http.StatusBadRequest, format, args...)
}

func invalidGrant(format string, args ...any) *Error {
	return oauthErr("invalid_grant", http.StatusBadRequest, format, args...)
}

func invalidClient(format string, args ...any) *Error {
	return oauthErr("invalid_client", http.StatusUnauthorized, format, args...)
}

func tooManyRequests(wait time.Duration) *Error {
	return &Error{Code: "too_many_requests", Status: http.StatusTooManyRequests, Description: "too many requests; try again later",
		RetryAfter: wait}
}

func serverError(err error) *Error {
	return &Error{Code: "server_error", Status: http.StatusInternalServerError, Description: "internal server error", Err: err}
}

// writeError is the one writer of OAuth error bodies: {error,
// error_description}. Causes of server errors are logged, never shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = serverError(err)
	}
	if e.Status >= 500 {
		s.log.LogAttrs(r.Context(), slog.LevelError, "oauth internal error", slog.String("path", r.URL.Path),
			slog.String("request_id", w.Header().Get("X-Request-Id")), slog.String("err", err.Error()))
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	if e.Code == "invalid_client" && r.Header.Get("Authorization") != "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="gatehouse"`)
	}
	w.Header().Set("Pragma", "no-cache") // RFC 6749 §5.1
	httpjson.Write(w, e.Status, struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{e.Code, e.Description})
}

// handler adapts an endpoint that returns its error.
func (s *Server) handler(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// writeBody writes v as JSON with status 200; headers are the caller's.
func writeBody(w http.ResponseWriter, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// Limit wraps h with an abuse limit: a request allow refuses gets 429 with
// Retry-After, in the OAuth error shape.
func (s *Server) Limit(allow func(r *http.Request) (bool, time.Duration), h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := allow(r); !ok {
			cors(w)
			s.writeError(w, r, tooManyRequests(wait))
			return
		}
		h.ServeHTTP(w, r)
	})
}
