package pages_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInNext: the return path after sign-in is a same-site path or the
// console home, never 400 and never another site, however it is spelled.
func TestSignInNext(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		signedIn := env.NewBrowser(t)
		if res := signedIn.Do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}); res.Status != http.StatusSeeOther {
			t.Fatalf("sign-in: %d; want 303", res.Status)
		}
		for _, tc := range []struct{ name, next, want string }{
			{"path with a query", "/ok/path?x=1", "/ok/path?x=1"},
			{"tab after the slash", "/\t/evil.example", "/"},
			{"scheme-relative", "//evil.example", "/"},
			{"three slashes", "///evil.example", "/"},
			{"backslash", "/\\evil.example", "/"},
			{"encoded backslash", "/%5Cevil", "/"},
			{"encoded slash", "/%2F/evil.example", "/"},
			{"absolute URL", "https://evil.example", "/"},
			{"javascript", "javascript:alert(1)", "/"},
			{"CR LF", "/ok\r\nSet-Cookie: x=1", "/"},
			{"LF", "/\n/evil.example", "/"},
			{"relative", "evil.example", "/"},
			{"credentials", "/@evil.example", "/@evil.example"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := env.NewBrowser(t).Do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {tc.next}})
				if got := res.Header.Get("Location"); res.Status != http.StatusSeeOther || got != tc.want {
					t.Fatalf("POST /signin next=%q: %d Location %q; want 303 to %q", tc.next, res.Status, got, tc.want)
				}
				// A signed-in browser opening the sign-in page goes on at once.
				res = signedIn.Do(t, "GET", "/signin?"+url.Values{"next": {tc.next}}.Encode(), nil)
				if got := res.Header.Get("Location"); res.Status != http.StatusSeeOther || got != tc.want {
					t.Fatalf("GET /signin?next=%q: %d Location %q; want 303 %q", tc.next, res.Status, got, tc.want)
				}
			})
		}
	})
}
