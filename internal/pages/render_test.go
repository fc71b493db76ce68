package pages_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPageHeaders checks the security headers and the golden HTML of the
// pages that depend on no data.
func TestPageHeaders(t *testing.T) {
	testenv.Run(t, testPageHeaders)
}

func testPageHeaders(t *testing.T, env *testenv.Env) {
	b := env.NewBrowser(t)
	for name, path := range map[string]string{"signin.html": "/signin", "magic.html": "/auth/magic?token=abc", "verify-email.html": "/verify-email?token=abc",
		"recover.html": "/recover", "reset-password.html": "/reset-password?token=abc",
		"signup.html": "/signup", "home-signed-out.html": "/"} {
		res := b.Do(t, "GET", path, nil)
		if res.Status != 200 {
			t.Fatalf("%s: %d", path, res.Status)
		}
		h := res.Header
		// The sign-in page (also "/" signed out) loads the passkey script of
		// this origin and fetches from it; no other of these runs a script.
		scripts := ""
		if path == "/signin" || path == "/" {
			scripts = "; script-src 'self'; connect-src 'self'"
		}
		if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'self'; img-src 'self'"+scripts+"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
			t.Fatalf("%s: CSP = %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: headers %v", path, h)
		}
		testenv.Golden(t, name, []byte(res.Body))
	}
	for path, ctype := range map[string]string{"/assets/gatehouse.css": "text/css", "/assets/brand.css": "text/css",
		"/assets/favicon.svg": "image/svg+xml", "/favicon.ico": "image/svg+xml", "/assets/copy.js": "text/javascript"} {
		res := b.Do(t, "GET", path, nil)
		if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: %d %s", path, res.Status, res.Header.Get("Content-Type"))
		}
	}
	res := b.Do(t, "GET", "/assets/passkey.js", nil)
	if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(res.Body, "navigator.credentials") {
		t.Fatalf("passkey script: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
}
