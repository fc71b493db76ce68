package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// MaxBody is the largest request body accepted; larger answers 413.
const MaxBody = 1 << 20

// decode reads a JSON object from r's body into dst. An empty body reads as
// {} so that a missing required field is reported by name.
func decode(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
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

// readBody reads r's body; a body over the limit is returned as is (413).
func readBody(r *http.Request) ([]byte, error) {
	body, err := httpjson.ReadBody(r)
	if errors.Is(err, httpjson.ErrUnreadable) {
		return nil, gatehouse.Invalid("could not read request body")
	}
	return body, err
}

// readJSONBody reads a JSON body and refuses one that escapes a NUL character.
func readJSONBody(r *http.Request) ([]byte, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if httpjson.HasNUL(body) {
		return nil, nulError()
	}
	return body, nil
}

// nulError refuses JSON text that escapes a NUL character (\u0000).
func nulError() error {
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

type message struct {
	Message string `json:"message"`
}
