package testenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The validator refuses what is really wrong: a body missing a required
// field, a status the operation does not declare, a route the document does
// not list, a 429 without Retry-After. It passes a right answer.
func TestOpenAPICheck(t *testing.T) {
	d, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	answer := func(status int, body string, header ...string) *recorder {
		rec := &recorder{ResponseWriter: httptest.NewRecorder()}
		rec.Header().Set("Content-Type", "application/json; charset=utf-8")
		for i := 0; i+1 < len(header); i += 2 {
			rec.Header().Set(header[i], header[i+1])
		}
		rec.WriteHeader(status)
		rec.Write([]byte(body))
		return rec
	}
	get := httptest.NewRequest("GET", "/health", nil)
	post := httptest.NewRequest("POST", "/v1/auth/login", strings.NewReader("{}"))
	links := httptest.NewRequest("GET", "/links/v1/links", nil)
	for _, c := range []struct {
		name    string
		pattern string
		r       *http.Request
		rec     *recorder
		wrong   string // part of the complaint; "" when right
	}{
		{"right", "GET /health", get, answer(200, `{"status":"ok","database":"ok"}`), ""},
		{"missing field", "GET /health", get, answer(200, `{"status":"ok"}`), "database"},
		{"extra field", "GET /health", get, answer(200, `{"status":"ok","database":"ok","x":1}`), "x"},
		{"undeclared status", "GET /health", get, answer(404, `{"error":"not found"}`), "status is not supported"},
		{"error shape", "POST /v1/auth/login", post, answer(401, `{"message":"no"}`), "error"},
		{"429 without Retry-After", "POST /v1/auth/login", post, answer(429, `{"error":"too many requests"}`), "Retry-After"},
		{"429 with Retry-After", "POST /v1/auth/login", post, answer(429, `{"error":"too many requests"}`, "Retry-After", "2"), ""},
		{"tool 401 without its challenge", "GET /links/v1/links", links, answer(401, `{"error":"missing bearer token"}`), "WWW-Authenticate"},
		{"tool 401", "GET /links/v1/links", links, answer(401, `{"error":"missing bearer token"}`, "WWW-Authenticate", `Bearer resource_metadata="x"`), ""},
		{"route not in the document", "GET /v1/nowhere", get, answer(200, `{}`), "not in the API document"},
		{"no route", "", get, answer(404, `{"error":"not found"}`), ""},
		{"HTML page", "GET /signin", get, answer(200, `<html>`), ""},
	} {
		page := c.pattern == "GET /signin" // mounted through web.Server.Pages
		got := check(d, c.pattern, page, c.r, c.rec)
		if (got == "") != (c.wrong == "") || !strings.Contains(got, c.wrong) {
			t.Errorf("%s: check = %q; want a complaint containing %q", c.name, got, c.wrong)
		}
	}
}
