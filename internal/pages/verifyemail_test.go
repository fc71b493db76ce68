package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestVerifyEmailLanding: the confirmation link's page verifies the
// address only on POST (mail scanners prefetch GETs), and only once.
func TestVerifyEmailLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		m := env.Mail.WaitFor(t, a.Email, 5*time.Second)
		tok := testenv.TokenFromLink(t, m.Text, "http://web.test/verify-email?token=")
		b := env.NewBrowser(t)
		if res := b.Do(t, "GET", "/verify-email?token="+url.QueryEscape(tok), nil); res.Status != 200 || !strings.Contains(res.Body, "Confirm my email address") {
			t.Fatalf("landing: %d", res.Status)
		}
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.email_verified") != false {
			t.Fatalf("verified by a GET")
		}
		res := b.Do(t, "POST", "/verify-email", url.Values{"token": {tok}})
		if res.Status != 200 || !strings.Contains(res.Body, "Email confirmed") {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.email_verified") != true {
			t.Fatalf("not verified after POST")
		}
		if res := b.Do(t, "POST", "/verify-email", url.Values{"token": {tok}}); res.Status != http.StatusGone || !strings.Contains(res.Body, "was used already") {
			t.Fatalf("second use: %d; want 410, the link used already", res.Status)
		}
	})
}
