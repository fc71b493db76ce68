package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMagicLinkLanding: the emailed link's page consumes the token only on
// POST (mail scanners prefetch GETs), then starts the browser session and
// continues where the sign-in began.
func TestMagicLinkLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		email := testenv.Email()
		next := "/device?user_code=BCDF-GHJK"
		res := b.Do(t, "POST", "/signin/magic", url.Values{"email": {email}, "next": {next}})
		if res.Status != 200 || !strings.Contains(res.Body, "Check your email") {
			t.Fatalf("request link: %d %s", res.Status, res.Body)
		}
		m := env.Mail.WaitFor(t, email, 5*time.Second)
		tok := testenv.TokenFromLink(t, m.Text, "http://web.test/auth/magic?token=")
		for range 2 { // a scanner's GETs change nothing
			if res := b.Do(t, "GET", "/auth/magic?token="+url.QueryEscape(tok), nil); res.Status != 200 || !strings.Contains(res.Body, `name="token"`) {
				t.Fatalf("landing: %d %s", res.Status, res.Body)
			}
		}
		res = b.Do(t, "POST", "/auth/magic", url.Values{"token": {tok}})
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != next {
			t.Fatalf("consume: %d %q; want 303 to %s", res.Status, res.Header.Get("Location"), next)
		}
		sc := res.Header.Values("Set-Cookie")
		joined := strings.Join(sc, "\n")
		if !strings.Contains(joined, "gatehouse_session=") || !strings.Contains(joined, "HttpOnly") || !strings.Contains(joined, "SameSite=Lax") {
			t.Fatalf("Set-Cookie = %v", sc)
		}
		if res := b.Do(t, "GET", "/account", nil); res.Status != 200 || !strings.Contains(res.Body, email) {
			t.Fatalf("signed-in page: %d %s", res.Status, res.Body)
		}
		// Single use.
		b2 := env.NewBrowser(t)
		if res := b2.Do(t, "POST", "/auth/magic", url.Values{"token": {tok}}); res.Status != 401 {
			t.Fatalf("second use: %d; want 401", res.Status)
		}
		// Sign out ends the session.
		if res := b.Do(t, "POST", "/signout", url.Values{}); res.Status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", res.Status)
		}
		if res := b.Do(t, "GET", "/signin", nil); strings.Contains(res.Body, email) {
			t.Fatalf("still signed in after sign-out")
		}
		// Open redirects are not followed.
		b3 := env.NewBrowser(t)
		a := env.Register(t)
		res = b3.Do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"//evil.example.com/"}})
		if res.Header.Get("Location") != "/" {
			t.Fatalf("next=//evil: Location %q", res.Header.Get("Location"))
		}
	})
}

// TestConsoleSetPassword: someone who signed up with an email link has no
// password; the account page offers to set one (no current password asked),
// a refused one is explained next to its field, and the one set then signs in.
func TestConsoleSetPassword(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		email := testenv.Email()
		wantPage(t, "email me a link", b.Post(t, "/signin/magic", url.Values{"email": {email}}), 200, "Check your email")
		tok := testenv.TokenFromLink(t, env.Mail.WaitFor(t, email, 5*time.Second).Text, "http://web.test/auth/magic?token=")
		wantRedirect(t, "open the link", b.Post(t, "/auth/magic", url.Values{"token": {tok}}), "/")
		res := b.Get(t, "/account")
		wantPage(t, "account", res, 200, "Set a password", "You sign in with email links")
		if strings.Contains(res.Body, `id="current_password"`) {
			t.Fatalf("a user without a password is asked for the current one")
		}
		wantPage(t, "too short", b.Post(t, "/account/password", url.Values{"new_password": {"short"}}), 400, `id="new_password-error"`, "Set a password")
		wantRedirect(t, "set", b.Post(t, "/account/password", url.Values{"new_password": {"a fresh passphrase"}}), "/account?done=password")
		wantPage(t, "now a password", b.Get(t, "/account"), 200, "Change password", `id="current_password"`)
		env.Login(t, email, "a fresh passphrase").Want(t, 200)
	})
}

// TestMagicLinkBadAddress: an address the link form refuses is explained
// next to that form's field, tied to it for screen readers, and kept.
func TestMagicLinkBadAddress(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		res := env.NewBrowser(t).Post(t, "/signin/magic", url.Values{"email": {"not-an-address"}})
		wantPage(t, "bad address", res, 400, `id="magic-email" name="email" type="email" autocomplete="email" required value="not-an-address" aria-invalid="true" aria-describedby="magic-email-error"`,
			`<p class="field-error" id="magic-email-error">`)
		if strings.Contains(res.Body, `<p class="error" role="alert">`) {
			t.Fatalf("the message is above the password form, not by the link form's field")
		}
	})
}
