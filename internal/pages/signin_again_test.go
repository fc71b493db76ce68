package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInAgainInPlace: a password change refused for an old sign-in
// answers with the sign-in form for the same account (no generic error
// page), keeps the form but its passwords, and after signing in again the
// account page offers it ready to send, once.
func TestSignInAgainInPlace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		env.Clock.Advance(identity.ReauthWindow + 1)
		form := url.Values{"current_password": {a.Password}, "new_password": {"a new passphrase"}, "revoke_api_keys": {"on"}}
		res := b.Post(t, "/account/password", form)
		wantPage(t, "stale change", res, http.StatusForbidden, "<h1>Sign in again</h1>", `name="next" value="/account"`,
			`value="`+a.Email+`" readonly`, `action="/signin/magic"`)
		if strings.Contains(res.Body, "a new passphrase") || strings.Contains(res.Body, a.Password) {
			t.Fatalf("a password is on the sign-in again page")
		}
		for _, ck := range b.Client.Jar.Cookies(mustURL(t, env.URL+"/account")) {
			if strings.Contains(ck.Value, "passphrase") || strings.Contains(ck.Value, "revoke_api_keys") {
				t.Fatalf("cookie %s holds the form in the clear: %q", ck.Name, ck.Value)
			}
		}
		wantRedirect(t, "sign in again", b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account"}}), "/account")
		res = b.Get(t, "/account")
		wantPage(t, "form kept", res, http.StatusOK, "Finish what you started", `action="/account/password"`,
			`name="revoke_api_keys" value="on"`, `id="resume-new_password"`, `id="resume-current_password"`)
		if strings.Contains(res.Body, "a new passphrase") {
			t.Fatalf("the new password came back on the page")
		}
		wantPage(t, "taken once", b.Get(t, "/account"), http.StatusOK)
		if strings.Contains(b.Get(t, "/account").Body, "Finish what you started") {
			t.Fatalf("the kept form is offered again after its view")
		}
		form.Set("current_password", a.Password)
		wantRedirect(t, "send it", b.Post(t, "/account/password", form), "/account?done=password-keys")
	})
}

// TestSignInAgainAttacks: the return path stays on the console; the
// sign-in and the refused form refuse cross-site posts, which keep no
// form; another account signing in in the same browser does not get the
// form; a kept form expires.
func TestSignInAgainAttacks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		b := signedIn(t, env, a)
		env.Clock.Advance(identity.ReauthWindow + 1)
		for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"} {
			wantRedirect(t, "next "+next, b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}}), "/")
		}
		env.Clock.Advance(identity.ReauthWindow + 1)
		wantPage(t, "cross-site sign-in", b.PostCrossSite(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account/delete"}}),
			http.StatusForbidden, "This form was sent from another site.")
		wantPage(t, "cross-site delete", b.PostCrossSite(t, "/account/delete", url.Values{"confirm": {a.Email}}),
			http.StatusForbidden, "This form was sent from another site.")
		wantRedirect(t, "sign in again", b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account/delete"}}), "/account/delete")
		if body := b.Get(t, "/account/delete").Body; strings.Contains(body, "Finish what you started") {
			t.Fatalf("a cross-site post left a form to send")
		}

		// Another account signs in in the same browser: the form stays behind.
		env.Clock.Advance(identity.ReauthWindow + 1)
		wantPage(t, "stale delete", b.Post(t, "/account/delete", url.Values{"confirm": {a.Email}}), http.StatusForbidden, "<h1>Sign in again</h1>")
		wantRedirect(t, "other account", b.Post(t, "/signin", url.Values{"email": {other.Email}, "password": {other.Password}, "next": {"/account/delete"}}), "/account/delete")
		if body := b.Get(t, "/account/delete").Body; strings.Contains(body, "Finish what you started") || strings.Contains(body, a.Email) {
			t.Fatalf("another account got the kept form:\n%s", body)
		}

		// A kept form waits ten minutes, no more.
		c := signedIn(t, env, a)
		env.Clock.Advance(identity.ReauthWindow + 1)
		wantPage(t, "stale delete", c.Post(t, "/account/delete", url.Values{"confirm": {a.Email}}), http.StatusForbidden, "<h1>Sign in again</h1>")
		env.Clock.Advance(11 * time.Minute)
		wantRedirect(t, "late sign-in", c.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account/delete"}}), "/account/delete")
		if body := c.Get(t, "/account/delete").Body; strings.Contains(body, "Finish what you started") {
			t.Fatalf("an expired kept form was offered")
		}
	})
}

// TestSignInAgainKinds: every kind of change that needs a recent sign-in
// answers with the sign-in form returning to its page, never the error
// page, and the page then offers the form.
func TestSignInAgainKinds(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		sessions := sessionIDs.FindAllStringSubmatch(b.Get(t, "/account/sessions").Body, -1)
		cases := []struct {
			action, page string
			form         url.Values
		}{
			{"/account/keys", "/account/keys", url.Values{"name": {"ci"}, "expires_in_days": {"30"}}},
			{"/account/email", "/account", url.Values{"email": {testenv.Email()}}},
			{"/account/delete", "/account/delete", url.Values{"confirm": {a.Email}}},
			{"/account/sessions/revoke-others", "/account/sessions", url.Values{"confirm": {"yes"}}},
			{"/account/sessions/revoke", "/account/sessions", url.Values{"confirm": {"yes"}, "id": {sessions[0][1]}}},
			{"/account/two-factor/totp", "/account/two-factor", url.Values{}},
			{"/account/two-factor/recovery-codes", "/account/two-factor", url.Values{"confirm": {"yes"}}},
		}
		for _, tc := range cases {
			env.Clock.Advance(identity.ReauthWindow + 1)
			res := b.Post(t, tc.action, tc.form)
			wantPage(t, tc.action, res, http.StatusForbidden, "<h1>Sign in again</h1>", `name="next" value="`+tc.page+`"`)
			wantRedirect(t, tc.action+": sign in again", b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {tc.page}}), tc.page)
			wantPage(t, tc.action+": kept", b.Get(t, tc.page), http.StatusOK, "Finish what you started", `action="`+tc.action+`"`)
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
