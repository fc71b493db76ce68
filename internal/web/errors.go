package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// statusOf is the one table from error kinds to HTTP statuses.
var statusOf = map[gatehouse.Kind]int{
	gatehouse.KindInvalid:      http.StatusBadRequest,
	gatehouse.KindUnauthorized: http.StatusUnauthorized,
	gatehouse.KindForbidden:    http.StatusForbidden,
	gatehouse.KindNotFound:     http.StatusNotFound,
	gatehouse.KindConflict:     http.StatusConflict,
	gatehouse.KindGone:         http.StatusGone,
	gatehouse.KindTooMany:      http.StatusTooManyRequests,
	gatehouse.KindUnavailable:  http.StatusServiceUnavailable,
}

// writeError answers err as {"error": message}. Errors without a kind are
// internal: they are logged with the request id and answered with a generic
// 500 that shows nothing of the cause.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *gatehouse.Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		httpjson.Write(w, http.StatusRequestEntityTooLarge, errorBody{fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit)})
		return
	case errors.As(err, &e) && e.Kind != gatehouse.KindInternal:
		status := statusOf[e.Kind]
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		s.refused(r, status, e.Message)
		httpjson.Write(w, status, errorBody{clip(e.Message)})
		return
	}
	if r.Context().Err() != nil {
		// The client went away (or the server is shutting down): not our
		// error, and nobody reads the answer.
		s.log.LogAttrs(context.Background(), slog.LevelDebug, "request cancelled",
			slog.String("request_id", requestID(r.Context())), slog.String("path", r.URL.Path))
		httpjson.Write(w, 499, errorBody{"request cancelled"})
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelError, "internal error",
		slog.String("request_id", requestID(r.Context())), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.String("err", err.Error()))
	httpjson.Write(w, http.StatusInternalServerError, errorBody{"internal server error (request id " + requestID(r.Context()) + ")"})
}

type errorBody struct {
	Error string `json:"error"`
}

// maxMessage bounds an error message: messages quote what the client sent,
// which may be long.
const maxMessage = 512

func clip(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	n := maxMessage
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + "…"
}
