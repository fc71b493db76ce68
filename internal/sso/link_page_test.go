package sso_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// getHTML is b.get as a browser asks for a page.
func (b *browser) getHTML(t *testing.T, raw string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	return b.do(t, req)
}

// linkInBrowser runs a social sign-in as claims in b, as a browser, to
// the callback's answer.
func linkInBrowser(t *testing.T, env *testenv.Env, idp *provider, b *browser, claims map[string]any) *http.Response {
	t.Helper()
	idp.as(claims)
	return b.getHTML(t, authorizeSocial(t, env, b, "acme"))
}

// TestLinkPage: in a browser, a sign-in that finds an existing account
// goes to the hosted link page (the token in a cookie, never the URL),
// which has the person sign in as usual and confirm; a form from another
// site and a session opened by social sign-in confirm nothing.
func TestLinkPage(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.VerifyEmail(t, a)
		claims := map[string]any{"sub": "l-" + testenv.RandomHex(3), "email": a.Email, "email_verified": true}
		b := newBrowser(env)
		resp := linkInBrowser(t, env, idp, b, claims)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin/link" || b.cookies["gatehouse_link"] == "" {
			t.Fatalf("callback answered %d to %q (cookies %v); want 303 to /signin/link with the link cookie", resp.StatusCode, resp.Header.Get("Location"), b.cookies)
		}
		if strings.Contains(resp.Header.Get("Location"), b.cookies["gatehouse_link"]) || sessionUser(t, env, b) != "" {
			t.Fatal("the token is in the URL, or a session was opened")
		}
		if resp := b.get(t, env.URL+"/signin/link"); resp.StatusCode != http.StatusSeeOther ||
			!strings.HasPrefix(resp.Header.Get("Location"), "/signin?") {
			t.Fatalf("link page signed out answered %d to %q; want the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp, _ := b.post(t, env.URL+"/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/signin/link"}}, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("password sign-in answered %d", resp.StatusCode)
		}
		if text := page(t, env, b, "/signin/link"); !strings.Contains(text, "Link it to my account") || !strings.Contains(text, a.Email) {
			t.Fatalf("the link page does not offer to link %s:\n%s", a.Email, text)
		}
		if resp, _ := b.post(t, env.URL+"/signin/link", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site confirmation answered %d; want 403", resp.StatusCode)
		}
		if n := len(identities(t, env, env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token"))); n != 0 {
			t.Fatalf("%d identities before confirming; want none", n)
		}
		if resp, _ := b.post(t, env.URL+"/signin/link", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/account/identities?done=linked" {
			t.Fatalf("confirmation answered %d to %q; want 303 to the identities page", resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp, b2 := socialIn(t, env, idp, "acme", claims); resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b2) != a.UserID {
			t.Errorf("sign-in after linking answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b2), a.UserID)
		}

		// A browser signed in through social sign-in proves no account.
		c := env.Register(t)
		env.VerifyEmail(t, c)
		s := newBrowser(env)
		idp.as(map[string]any{"sub": "s-" + testenv.RandomHex(3), "email": "s-" + testenv.RandomHex(3) + "@example.com"})
		s.get(t, authorizeSocial(t, env, s, "acme"))
		linkInBrowser(t, env, idp, s, map[string]any{"sub": "c-" + testenv.RandomHex(3), "email": c.Email, "email_verified": true})
		if resp, text := s.post(t, env.URL+"/signin/link", nil, nil); resp.StatusCode != http.StatusForbidden || !strings.Contains(text, "password") {
			t.Errorf("confirmation from a social session answered %d; want 403", resp.StatusCode)
		}
	})
}
