package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestShowOnceSealed: the cookie that carries a new key's secret across
// the redirect holds it sealed, never readable; a value altered, moved to
// another page, written in the clear, or carried to another account's
// browser shows nothing (and breaks nothing), while the untouched cookie
// shows the secret, on this instance or another one.
func TestShowOnceSealed(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		b, ob := signedIn(t, env, a), signedIn(t, env, other)
		res := b.Post(t, "/account/keys", url.Values{"name": {"sealed key"}, "scope": {"all"}, "expires_in_days": {"30"}})
		wantRedirect(t, "create", res, "/account/keys")
		var shown *http.Cookie
		for _, c := range (&http.Response{Header: res.Header}).Cookies() {
			if c.Name == "gatehouse_show_once" {
				shown = c
			}
		}
		if shown == nil || !strings.Contains(shown.Value, ".") {
			t.Fatalf("no show-once cookie in %v", res.Header["Set-Cookie"])
		}
		if strings.Contains(shown.Value, "svc_") {
			t.Fatalf("the show-once cookie holds the secret readable: %q", shown.Value)
		}
		id, sealed, _ := strings.Cut(shown.Value, ".")

		set := func(br *testenv.Browser, path, value string) {
			u, _ := url.Parse(env.URL + path)
			br.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_show_once", Value: value, Path: path}})
		}
		flipped := []byte(sealed)
		flipped[len(flipped)/2] ^= 1
		if flipped[len(flipped)/2] == '.' {
			flipped[len(flipped)/2] = 'A'
		}
		for _, tc := range []struct {
			name, path, value string
			br                *testenv.Browser
		}{
			{"altered", "/account/keys", id + "." + string(flipped), b},
			{"in the clear", "/account/keys", id + ".svc_u_not_sealed", b},
			{"another object", "/account/keys", "f" + id[1:] + "." + sealed, b},
			{"another page", "/account/two-factor", shown.Value, b},
			{"another account", "/account/keys", shown.Value, ob},
		} {
			set(tc.br, tc.path, tc.value)
			page := tc.br.Get(t, tc.path)
			if page.Status != 200 || strings.Contains(page.Body, "only time it is shown") || strings.Contains(page.Body, `id="new-secret"`) {
				t.Fatalf("%s: %d, or a secret is shown:\n%.3000s", tc.name, page.Status, page.Body)
			}
		}
		set(b, "/account/keys", shown.Value)
		wantPage(t, "the cookie as set", b.Get(t, "/account/keys"), 200, "This is the only time it is shown", `id="new-secret"`)
		// Another instance on the same database opens what this one sealed
		// (the redirect's next view may reach either behind a balancer).
		env2 := env.Another(t)
		b2 := signedIn(t, env2, a)
		set(b2, "/account/keys", shown.Value)
		wantPage(t, "another instance", b2.Get(t, "/account/keys"), 200, "This is the only time it is shown", `id="new-secret"`)
	})
}
