package testenv

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/gatehouse/gatehouse/api"
)

// The OpenAPI document (api/openapi/, bundled), parsed and checked once per test
// process.
var (
	docOnce sync.Once
	doc     *openapi3.T
	docErr  error
)

// OpenAPI returns the parsed OpenAPI document, or why it is not a valid
// OpenAPI 3.1 document.
func OpenAPI() (*openapi3.T, error) {
	docOnce.Do(func() {
		// The MCP server's stream (GET {mcp_url}) is Server-Sent Events.
		openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.FileBodyDecoder)
		doc, docErr = openapi3.NewLoader().LoadFromData(api.Document())
		if docErr == nil {
			docErr = doc.Validate(context.Background())
		}
	})
	return doc, docErr
}

// router finds the route (the ServeMux pattern) that serves a request; the
// web server has it.
type router interface {
	Route(r *http.Request) string
	IsPage(pattern string) bool
	PagePatterns() []string
}

// validated wraps the server so that every response is checked against the
// OpenAPI document: its status must be declared for the operation, with
// the headers and the body schema the document gives. Failures are errors
// of the test that started the server. Requests are not checked: tests send
// bad input on purpose.
func (e *Env) validated(t testing.TB, h http.Handler) http.Handler {
	d, err := OpenAPI()
	if err != nil {
		t.Fatalf("api/openapi: %v", err)
	}
	rt, ok := h.(router)
	if !ok {
		t.Fatalf("testenv: the server does not tell its routes")
	}
	e.routes = rt
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pattern := rt.Route(r)
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if msg := check(d, pattern, rt.IsPage(pattern), r, rec); msg != "" {
			t.Errorf("OpenAPI: %s %s answered %d: %s\nbody: %.600s", r.Method, r.URL.Path, rec.status(), msg, rec.body.Bytes())
		}
	})
}

// PagePatterns lists the patterns of the server's page routes
// (web.Server.Pages), sorted.
func (e *Env) PagePatterns() []string { return e.routes.PagePatterns() }

// Route returns the pattern of the server's route for method and path
// ("GET /v1/orgs/{id}"), or "" when none serves it.
func (e *Env) Route(method, path string) string {
	r, err := http.NewRequest(method, e.URL+path, nil)
	if err != nil {
		return ""
	}
	return e.routes.Route(r)
}

// check validates one response; it returns what is wrong, or "".
func check(d *openapi3.T, pattern string, page bool, r *http.Request, rec *recorder) string {
	method, path, ok := strings.Cut(pattern, " ")
	switch {
	case pattern == "" || page:
		return "" // no route (the server's own 404 and 405), or a page (web.Server.Pages)
	case !ok:
		return "" // "/{tool}/v1/": the paths of a tool API that no operation serves (401, 403, 404)
	case rec.status() == 499:
		return "" // the client went away; nobody reads the answer
	}
	path = strings.ReplaceAll(path, "...}", "}")
	item := d.Paths.Value(path)
	var op *openapi3.Operation
	if item != nil {
		op = item.GetOperation(method)
	}
	if op == nil {
		return "the route " + pattern + " is not in the API document (api/openapi/)"
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r,
			Route: &routers.Route{Spec: d, Path: path, PathItem: item, Method: method, Operation: op}},
		Status:  rec.status(),
		Header:  rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(rec.body.Bytes())
	if err := openapi3filter.ValidateResponse(r.Context(), in); err != nil {
		return err.Error()
	}
	return ""
}

// recorder passes a response through and keeps its status and body.
type recorder struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (rec *recorder) WriteHeader(code int) {
	if rec.code == 0 {
		rec.code = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	rec.body.Write(b)
	return rec.ResponseWriter.Write(b)
}

func (rec *recorder) status() int {
	if rec.code == 0 {
		return http.StatusOK
	}
	return rec.code
}

// Unwrap lets http.ResponseController reach the real writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
