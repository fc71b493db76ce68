package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"

	"github.com/gatehouse/gatehouse"
)

// MaxBody is the largest request body accepted; larger answers 413.
const MaxBody = 1 << 20

// nulEscape finds a JSON \u0000 escape (one not itself escaped as \\u0000).
var nulEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u0000`)

// decode reads a JSON object from r's body into dst. An empty body reads as
// {} so that a missing required field is reported by name.
func decode(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return gatehouse.Invalid("could not read request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if bytes.Contains(body, []byte(`\u0000`)) && nulEscape.Match(body) {
		// PostgreSQL text cannot hold NUL; no field of the API needs it.
		return gatehouse.Invalid("strings must not contain NUL characters (\\u0000)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return gatehouse.Invalid("%s must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
		case errors.As(err, &typeErr):
			return gatehouse.Invalid("request body must be a JSON object")
		case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
			return gatehouse.Invalid("request body is not valid JSON")
		}
		return gatehouse.Invalid("request body is not valid JSON")
	}
	if dec.More() {
		return gatehouse.Invalid("request body must hold one JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint32":
		return "an integer"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "ptr":
		return "a value of another type"
	}
	return "an object"
}

// writeJSON writes v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

type message struct {
	Message string `json:"message"`
}
