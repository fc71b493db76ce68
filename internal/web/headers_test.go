package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/web"
)

// hardened checks the headers every answer carries; csp is the policy
// it must have.
func hardened(t *testing.T, what string, h http.Header, csp string) {
	t.Helper()
	for name, want := range map[string]string{
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Content-Security-Policy": csp,
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s = %q; want %q", what, name, got, want)
		}
	}
}

// securityCalls are answers of every kind the kernel writes: JSON 200 and
// errors, its own routes, 404 and 405, a panic-free page.
func securityCalls(t *testing.T, env *testenv.Env) map[string]*testenv.Resp {
	a := env.Register(t)
	return map[string]*testenv.Resp{
		"JSON 200":     env.Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200),
		"JSON 401":     env.Call(t, "GET", "/v1/auth/me", "", nil).Want(t, 401),
		"JSON 400":     env.Call(t, "POST", "/v1/auth/login", "", "not json").Want(t, 400),
		"404":          env.Call(t, "GET", "/nope", "", nil).Want(t, 404),
		"405":          env.Call(t, "DELETE", "/health", "", nil).Want(t, 405),
		"health":       env.Call(t, "GET", "/health", "", nil).Want(t, 200),
		"openapi":      env.Call(t, "GET", "/openapi.json", "", nil).Want(t, 200),
		"tool API 401": env.Call(t, "GET", "/tasks/v1/tasks", "", nil).Want(t, 401),
	}
}

// TestSecurityHeaders: every answer the kernel writes, JSON included,
// refuses sniffing and framing, loads nothing (a default-deny CSP) and
// sends no referrer; a page keeps its own, stricter-for-pages CSP; a
// plain-http base URL sends no HSTS.
func TestSecurityHeaders(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for what, r := range securityCalls(t, env) {
			hardened(t, what, r.Header, web.DefaultCSP)
			if got := r.Header.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("%s: Strict-Transport-Security %q on an http base URL", what, got)
			}
		}
		page := env.NewBrowser(t).Get(t, "/signin")
		if page.Status != 200 {
			t.Fatalf("GET /signin: %d", page.Status)
		}
		csp := page.Header.Get("Content-Security-Policy")
		for _, part := range []string{"default-src 'none'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, part) {
				t.Errorf("sign-in page CSP %q lacks %q", csp, part)
			}
		}
		hardened(t, "sign-in page", page.Header, csp)
	})
}

// TestHSTS: with an https base URL every answer carries
// Strict-Transport-Security, pages and errors included, unless
// GATEHOUSE_HSTS is off.
func TestHSTS(t *testing.T) {
	testenv.RunWith(t, testenv.Options{TLS: true}, func(t *testing.T, env *testenv.Env) {
		headers := map[string]http.Header{"page": env.NewBrowser(t).Get(t, "/signin").Header}
		for what, r := range securityCalls(t, env) {
			headers[what] = r.Header
		}
		for what, h := range headers {
			if got := h.Get("Strict-Transport-Security"); got != "max-age=63072000; includeSubDomains" {
				t.Errorf("%s: Strict-Transport-Security = %q; want max-age=63072000; includeSubDomains", what, got)
			}
		}
	})
	testenv.RunWith(t, testenv.Options{TLS: true, NoHSTS: true}, func(t *testing.T, env *testenv.Env) {
		for what, r := range securityCalls(t, env) {
			if got := r.Header.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("GATEHOUSE_HSTS=off: %s: Strict-Transport-Security = %q; want none", what, got)
			}
			hardened(t, what, r.Header, web.DefaultCSP)
		}
	})
}
