package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Decode reads a JSON object from r's body into dst, for the API's
// handlers: a failure is a gatehouse.Invalid error with the message the
// caller is shown. An empty body reads as {} so that a missing required
// field is reported by name.
func Decode(r *http.Request, dst any) error {
	body, err := JSONBody(r)
	if err != nil {
		return err
	}
	return decode(body, dst)
}

// DecodeBytes decodes body as Decode decodes a request's, with the same
// answers (the MCP server's tool arguments, decoded as the API's bodies).
func DecodeBytes(body []byte, dst any) error {
	if HasNUL(body) {
		return NULError()
	}
	return decode(body, dst)
}

func decode(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return gatehouse.InvalidField(typeErr.Field, "%s must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
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

// Body reads r's body for the API; a body over the limit is returned as is
// (413), any other failure is a gatehouse.Invalid error.
func Body(r *http.Request) ([]byte, error) {
	body, err := ReadBody(r)
	if errors.Is(err, ErrUnreadable) {
		return nil, gatehouse.Invalid("could not read request body")
	}
	return body, err
}

// JSONBody reads a JSON body as Body does and refuses one that escapes a
// NUL character.
func JSONBody(r *http.Request) ([]byte, error) {
	body, err := Body(r)
	if err != nil {
		return nil, err
	}
	if HasNUL(body) {
		return nil, NULError()
	}
	return body, nil
}

// NULError refuses JSON text that escapes a NUL character (\u0000).
func NULError() error {
	return gatehouse.Invalid("strings must not contain NUL characters (\\u0000)")
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

// Stamp is a time as the API writes it: RFC 3339 in UTC, to the second.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// StampPtr is Stamp of an optional time; nil writes null.
func StampPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Stamp(*t)
	return &s
}

// Optional is an optional string field: "" writes null.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
