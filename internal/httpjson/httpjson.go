// Package httpjson reads request bodies and writes JSON answers the same way
// for the API (internal/web and the tool modules) and the OAuth endpoints
// (internal/oauth), each of which keeps its own error shape; Decode and the
// readers of decode.go answer in the API's (gatehouse errors).
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
)

// ErrUnreadable is returned by ReadBody when the body could not be read for
// a reason other than its size.
var ErrUnreadable = errors.New("could not read request body")

// ReadBody reads r's whole body. A body over the limit set by
// http.MaxBytesReader returns its *http.MaxBytesError (see TooBig), so that
// the caller can answer 413; any other failure wraps ErrUnreadable.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if TooBig(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return body, nil
}

// TooBig reports whether err is the body limit's (*http.MaxBytesError).
func TooBig(err error) bool {
	var e *http.MaxBytesError
	return errors.As(err, &e)
}

// nulEscape finds a JSON \u0000 escape (one not itself escaped as \\u0000).
var nulEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u0000`)

// HasNUL reports whether JSON text escapes a NUL character (\u0000), which
// PostgreSQL text cannot hold and no field of the API needs. An escaped
// backslash followed by u0000 is plain text and does not count.
func HasNUL(doc []byte) bool {
	return bytes.Contains(doc, []byte(`\u0000`)) && nulEscape.Match(doc)
}

// Write writes v as a JSON answer with status, marked for no cache to keep.
// Headers the caller set before (Pragma, CORS) are sent too.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Each returns conv of every item, in order: a list answer's JSON shapes.
func Each[T, J any](items []T, conv func(T) J) []J {
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = conv(it)
	}
	return out
}
