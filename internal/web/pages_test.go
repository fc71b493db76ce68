package web_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

type browser struct {
	env *testenv.Env
	c   *http.Client
}

func newBrowser(t *testing.T, env *testenv.Env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{env: env, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(t *testing.T, method, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.env.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res, string(data)
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.env.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (go test -update rewrites it):\ngot:\n%s", name, got)
	}
}

// TestPageHeaders checks the security headers and the golden HTML of the
// pages that depend on no data.
func TestPageHeaders(t *testing.T) {
	testenv.Run(t, testPageHeaders)
}

func testPageHeaders(t *testing.T, env *testenv.Env) {
	b := newBrowser(t, env)
	for name, path := range map[string]string{"signin.html": "/signin", "magic.html": "/auth/magic?token=abc", "verify-email.html": "/verify-email?token=abc"} {
		res, body := b.do(t, "GET", path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		h := res.Header
		if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
			t.Fatalf("%s: CSP = %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: headers %v", path, h)
		}
		golden(t, name, []byte(body))
	}
	res, _ := b.do(t, "GET", "/assets/gatehouse.css", nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// TestMagicLinkLanding: the emailed link's page consumes the token only on
// POST (mail scanners prefetch GETs), then starts the browser session and
// continues where the sign-in began.
func TestMagicLinkLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := newBrowser(t, env)
		email := testenv.Email()
		next := "/device?user_code=BCDF-GHJK"
		res, body := b.do(t, "POST", "/signin/magic", url.Values{"email": {email}, "next": {next}})
		if res.StatusCode != 200 || !strings.Contains(body, "Check your email") {
			t.Fatalf("request link: %d %s", res.StatusCode, body)
		}
		m := env.Mail.WaitFor(t, email, 5*time.Second)
		tok := testenv.TokenFromLink(t, m.Text, "http://web.test/auth/magic?token=")
		for range 2 { // a scanner's GETs change nothing
			if res, body := b.do(t, "GET", "/auth/magic?token="+url.QueryEscape(tok), nil); res.StatusCode != 200 || !strings.Contains(body, `name="token"`) {
				t.Fatalf("landing: %d %s", res.StatusCode, body)
			}
		}
		res, _ = b.do(t, "POST", "/auth/magic", url.Values{"token": {tok}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != next {
			t.Fatalf("consume: %d %q; want 303 to %s", res.StatusCode, res.Header.Get("Location"), next)
		}
		sc := res.Header.Values("Set-Cookie")
		joined := strings.Join(sc, "\n")
		if !strings.Contains(joined, "gatehouse_session=") || !strings.Contains(joined, "HttpOnly") || !strings.Contains(joined, "SameSite=Lax") {
			t.Fatalf("Set-Cookie = %v", sc)
		}
		if res, body := b.do(t, "GET", "/signin", nil); res.StatusCode != 200 || !strings.Contains(body, email) {
			t.Fatalf("signed-in page: %d %s", res.StatusCode, body)
		}
		// Single use.
		b2 := newBrowser(t, env)
		if res, _ := b2.do(t, "POST", "/auth/magic", url.Values{"token": {tok}}); res.StatusCode != 401 {
			t.Fatalf("second use: %d; want 401", res.StatusCode)
		}
		// Sign out ends the session.
		if res, _ := b.do(t, "POST", "/signout", url.Values{}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign out: %d", res.StatusCode)
		}
		if _, body := b.do(t, "GET", "/signin", nil); strings.Contains(body, email) {
			t.Fatalf("still signed in after sign-out")
		}
		// Open redirects are not followed.
		b3 := newBrowser(t, env)
		a := env.Register(t)
		res, _ = b3.do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"//evil.example.com/"}})
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
		b := newBrowser(t, env)
		if res, body := b.do(t, "GET", "/verify-email?token="+url.QueryEscape(tok), nil); res.StatusCode != 200 || !strings.Contains(body, "Confirm my email address") {
			t.Fatalf("landing: %d", res.StatusCode)
		}
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.email_verified") != false {
			t.Fatalf("verified by a GET")
		}
		res, body := b.do(t, "POST", "/verify-email", url.Values{"token": {tok}})
		if res.StatusCode != 200 || !strings.Contains(body, "Email confirmed") {
			t.Fatalf("confirm: %d %s", res.StatusCode, body)
		}
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.email_verified") != true {
			t.Fatalf("not verified after POST")
		}
		if res, _ := b.do(t, "POST", "/verify-email", url.Values{"token": {tok}}); res.StatusCode != 401 {
			t.Fatalf("second use: %d; want 401", res.StatusCode)
		}
	})
}

// TestInviteLanding covers the invitation page, GET and POST /invite,
// through the real accounts service: an invitation made through the API
// previews its org (escaped), a revoked one is gone, an anonymous accept
// goes to sign-in, and a signed-in accept joins the org.
func TestInviteLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := newBrowser(t, env)
		if res, _ := b.do(t, "GET", "/invite?token=x", nil); res.StatusCode != 404 {
			t.Fatalf("unknown token: status %d; want 404", res.StatusCode)
		}
		owner := env.Register(t)
		org := env.CreateOrg(t, owner, "Acme <Team> "+testenv.RandomHex(3))
		good := env.InviteByLink(t, owner.Token, org)
		revoked := env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"emails": []string{testenv.Email()}}).Want(t, 200)
		inv := revoked.Get("invitations").([]any)[0].(map[string]any)
		env.Do(t, "DELETE", "/v1/orgs/"+org+"/invitations/"+inv["id"].(string), owner.Token, nil).Want(t, 200)

		res, body := b.do(t, "GET", "/invite?token="+url.QueryEscape(good), nil)
		if res.StatusCode != 200 || !strings.Contains(body, "Acme &lt;Team&gt;") || !strings.Contains(body, "Sign in to accept") {
			t.Fatalf("preview: %d %s", res.StatusCode, body)
		}
		if res, _ := b.do(t, "GET", "/invite?token="+url.QueryEscape(testenv.InviteToken(t, inv["url"].(string))), nil); res.StatusCode != 410 {
			t.Fatalf("revoked: %d; want 410", res.StatusCode)
		}
		if res, _ := b.do(t, "POST", "/invite", url.Values{"token": {good}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("anonymous accept: %d; want a sign-in redirect", res.StatusCode)
		}
		a := env.Register(t)
		b.do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}})
		if _, body := b.do(t, "GET", "/invite?token="+url.QueryEscape(good), nil); !strings.Contains(body, "Accept the invitation") {
			t.Fatalf("signed-in preview lacks the accept button: %s", body)
		}
		res, body = b.do(t, "POST", "/invite", url.Values{"token": {good}})
		if res.StatusCode != 200 || !strings.Contains(body, "You joined") {
			t.Fatalf("accept: %d %s", res.StatusCode, body)
		}
		if role := env.MemberRoles(t, owner.Token, org)[a.UserID]; role != "member" {
			t.Fatalf("after accepting, the user's role in the org is %q; want member", role)
		}
	})
}
