package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestRecoverPages: "Forgot your password?" on the sign-in page leads to
// the request form; the emailed link's page uses the link only on POST,
// shows a refused password's reason with the form again (the link still
// works), then sets the password, starts the browser session and lands
// on the sign-in page. A cross-site POST is refused and uses nothing.
func TestRecoverPages(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		if res := b.Get(t, "/signin"); !strings.Contains(res.Body, `<a href="/recover">Forgot your password?</a>`) {
			t.Fatalf("sign-in page has no recovery link:\n%s", res.Body)
		}
		if res := b.Post(t, "/recover", url.Values{"email": {"not-an-address"}}); res.Status != 400 || !strings.Contains(res.Body, `class="error"`) {
			t.Fatalf("malformed address: %d", res.Status)
		}
		known := b.Post(t, "/recover", url.Values{"email": {a.Email}})
		if known.Status != 200 || !strings.Contains(known.Body, "Check your email") {
			t.Fatalf("request: %d %s", known.Status, known.Body)
		}
		unknown := testenv.Email()
		other := b.Post(t, "/recover", url.Values{"email": {unknown}})
		if other.Status != 200 || strings.ReplaceAll(other.Body, unknown, a.Email) != known.Body {
			t.Fatalf("unknown address answered another page:\n%s\nwant:\n%s", other.Body, known.Body)
		}
		tok := env.MailToken(t, a.Email, "http://web.test/reset-password?token=")
		for range 2 { // a scanner's GETs change nothing
			if res := b.Get(t, "/reset-password?token="+url.QueryEscape(tok)); res.Status != 200 || !strings.Contains(res.Body, `name="token" value="`+tok+`"`) {
				t.Fatalf("landing: %d %s", res.Status, res.Body)
			}
		}
		t.Run("cross-site POST is refused", func(t *testing.T) {
			if res := b.PostCrossSite(t, "/reset-password", url.Values{"token": {tok}, "new_password": {"cross-site password"}}); res.Status != http.StatusForbidden {
				t.Fatalf("cross-site POST: %d; want 403", res.Status)
			}
		})
		res := b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {"sunshine"}})
		if res.Status != 400 || !strings.Contains(res.Body, "The new password is too common") || !strings.Contains(res.Body, `value="`+tok+`"`) {
			t.Fatalf("common password: %d %s", res.Status, res.Body)
		}
		const pw = "a page-chosen passphrase"
		res = b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw}})
		if res.Status != http.StatusSeeOther || res.Location() != "/" {
			t.Fatalf("reset: %d %q; want 303 to the console", res.Status, res.Location())
		}
		if res := b.Get(t, "/account"); !strings.Contains(res.Body, a.Email) {
			t.Fatalf("not signed in after the reset")
		}
		env.Login(t, a.Email, a.Password).Want(t, 401)
		env.Login(t, a.Email, pw).Want(t, 200)
		env.Refresh(t, a.Refresh).Want(t, 401)
		if res := env.NewBrowser(t).Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw + "!"}}); res.Status != 401 {
			t.Fatalf("second use: %d; want 401", res.Status)
		}
	})
}
