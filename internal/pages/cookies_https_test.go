package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// setCookies are the cookies an answer sets, by name.
func setCookies(res *testenv.Page) map[string]*http.Cookie {
	out := map[string]*http.Cookie{}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		out[c.Name] = c
	}
	return out
}

// wantHostCookie checks that res sets the cookie __Host-<name> as the
// prefix requires (Secure, path /, no Domain), and no cookie under the
// plain name.
func wantHostCookie(t *testing.T, what string, res *testenv.Page, name string) *http.Cookie {
	t.Helper()
	cs := setCookies(res)
	c := cs["__Host-"+name]
	if c == nil || !c.Secure || c.Path != "/" || c.Domain != "" || !c.HttpOnly {
		t.Fatalf("%s: Set-Cookie %v; want __Host-%s, Secure, HttpOnly, Path=/, no Domain", what, res.Header.Values("Set-Cookie"), name)
	}
	if cs[name] != nil {
		t.Fatalf("%s: also sets the plain %s: %v", what, name, res.Header.Values("Set-Cookie"))
	}
	return c
}

// TestHostCookiesUnderHTTPS: with an https base URL every cookie of the
// pages carries the __Host- prefix (a sibling subdomain or a plain-http
// answer cannot plant or replace it), and the flows that read them still
// work: the pending second-factor sign-in, the browser session, where a
// magic link continues, and a new key's secret shown once.
func TestHostCookiesUnderHTTPS(t *testing.T) {
	testenv.RunWith(t, testenv.Options{TLS: true}, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		b := env.NewBrowser(t)
		res := b.Post(t, "/signin", url.Values{"email": {m.Email}, "password": {m.Password}, "next": {"/account/keys"}})
		wantRedirect(t, "password sign-in owing a factor", res, "/signin/mfa?"+url.Values{"next": {"/account/keys"}}.Encode())
		wantHostCookie(t, "pending sign-in", res, "gatehouse_mfa")
		res = b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, m.Secret)}, "next": {"/account/keys"}})
		wantRedirect(t, "second factor", res, "/account/keys")
		wantHostCookie(t, "browser session", res, "gatehouse_session")
		if c := setCookies(res)["__Host-gatehouse_mfa"]; c == nil || c.MaxAge >= 0 {
			t.Fatalf("second factor: the pending cookie is not cleared: %v", res.Header.Values("Set-Cookie"))
		}
		wantPage(t, "console over https", b.Get(t, "/account/keys"), 200, "Create key")

		res = b.Post(t, "/account/keys", url.Values{"name": {"https key"}, "scope": {"all"}, "expires_in_days": {"30"}})
		wantRedirect(t, "create key", res, "/account/keys")
		wantHostCookie(t, "new key's secret", res, "gatehouse_show_once")
		wantPage(t, "key page shows the secret once", b.Get(t, "/account/keys"), 200, "only time it is shown")
		if res := b.Get(t, "/account/keys"); strings.Contains(res.Body, "only time it is shown") {
			t.Fatal("the secret is shown twice")
		}

		res = env.NewBrowser(t).Post(t, "/signin/magic", url.Values{"email": {m.Email}, "next": {"/account"}})
		wantPage(t, "magic link requested", res, 200, "Check your email")
		wantHostCookie(t, "magic link's next", res, "gatehouse_next")
	})
}
