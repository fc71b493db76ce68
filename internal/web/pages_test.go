package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPageHeaders checks the security headers and the golden HTML of the
// pages that depend on no data.
func TestPageHeaders(t *testing.T) {
	testenv.Run(t, testPageHeaders)
}

func testPageHeaders(t *testing.T, env *testenv.Env) {
	b := env.NewBrowser(t)
	for name, path := range map[string]string{"signin.html": "/signin", "magic.html": "/auth/magic?token=abc", "verify-email.html": "/verify-email?token=abc"} {
		res := b.Do(t, "GET", path, nil)
		if res.Status != 200 {
			t.Fatalf("%s: %d", path, res.Status)
		}
		h := res.Header
		if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
			t.Fatalf("%s: CSP = %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: headers %v", path, h)
		}
		testenv.Golden(t, name, []byte(res.Body))
	}
	res := b.Do(t, "GET", "/assets/gatehouse.css", nil)
	if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
}

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
		if res := b.Do(t, "GET", "/signin", nil); res.Status != 200 || !strings.Contains(res.Body, email) {
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
		if res.Header.Get("Location") != "/signin" {
			t.Fatalf("next=//evil: Location %q", res.Header.Get("Location"))
		}
	})
}

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
		if res := b.Do(t, "POST", "/verify-email", url.Values{"token": {tok}}); res.Status != 401 {
			t.Fatalf("second use: %d; want 401", res.Status)
		}
	})
}

// TestInviteLanding covers the invitation page, GET and POST /invite,
// through the real accounts service: an invitation made through the API
// previews its org (escaped), a revoked one is gone, an anonymous accept
// goes to sign-in, and a signed-in accept joins the org.
func TestInviteLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		if res := b.Do(t, "GET", "/invite?token=x", nil); res.Status != 404 {
			t.Fatalf("unknown token: status %d; want 404", res.Status)
		}
		owner := env.Register(t)
		org := env.CreateOrg(t, owner, "Acme <Team> "+testenv.RandomHex(3))
		good := env.InviteByLink(t, owner.Token, org)
		revoked := env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"emails": []string{testenv.Email()}}).Want(t, 200)
		inv := revoked.Get("invitations").([]any)[0].(map[string]any)
		env.Do(t, "DELETE", "/v1/orgs/"+org+"/invitations/"+inv["id"].(string), owner.Token, nil).Want(t, 200)

		res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(good), nil)
		if res.Status != 200 || !strings.Contains(res.Body, "Acme &lt;Team&gt;") || !strings.Contains(res.Body, "Sign in to accept") {
			t.Fatalf("preview: %d %s", res.Status, res.Body)
		}
		if res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(testenv.InviteToken(t, inv["url"].(string))), nil); res.Status != 410 {
			t.Fatalf("revoked: %d; want 410", res.Status)
		}
		if res := b.Do(t, "POST", "/invite", url.Values{"token": {good}}); res.Status != http.StatusSeeOther {
			t.Fatalf("anonymous accept: %d; want a sign-in redirect", res.Status)
		}
		a := env.Register(t)
		b.Do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}})
		if res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(good), nil); !strings.Contains(res.Body, "Accept the invitation") {
			t.Fatalf("signed-in preview lacks the accept button: %s", res.Body)
		}
		res = b.Do(t, "POST", "/invite", url.Values{"token": {good}})
		if res.Status != 200 || !strings.Contains(res.Body, "You joined") {
			t.Fatalf("accept: %d %s", res.Status, res.Body)
		}
		if role := env.MemberRoles(t, owner.Token, org)[a.UserID]; role != "member" {
			t.Fatalf("after accepting, the user's role in the org is %q; want member", role)
		}
	})
}
