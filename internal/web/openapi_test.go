package web_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// GET /openapi.json answers the embedded document, cacheable, and the
// document is valid OpenAPI 3.1.
func TestOpenAPIServed(t *testing.T) {
	doc, err := testenv.OpenAPI()
	if err != nil {
		t.Fatalf("the API document is not valid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q; want 3.1.0", doc.OpenAPI)
	}
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := env.Do(t, "GET", "/openapi.json", "", nil).Want(t, 200)
		if !bytes.Equal(r.Body, api.Document()) || len(r.Body) == 0 {
			t.Fatalf("body is not the embedded document (%d bytes)", len(r.Body))
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type = %q", ct)
		}
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
			t.Fatalf("Cache-Control = %q; want cacheable", cc)
		}
	})
}

// Every operation of the document is a route of the server: the document
// lists nothing the code does not serve. (Routes the document misses fail
// the tests that call them: every response is validated.)
func TestOpenAPIOperationsAreRoutes(t *testing.T) {
	doc, err := testenv.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		n := 0
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				got := strings.ReplaceAll(env.Route(method, param.ReplaceAllString(path, "x1")), "...}", "}")
				if want := method + " " + path; got != want {
					t.Errorf("%s: the server routes it to %q", want, got)
				}
				n++
			}
		}
		if n < 100 {
			t.Fatalf("only %d operations in the document", n)
		}
	})
}
