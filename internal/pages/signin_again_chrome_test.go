package pages_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSignInAgain is an OpenID Connect prompt=login as a person
// meets it, in headless Chromium on both databases: signed in already,
// the authorization request shows the sign-in form again (checked by
// axe-core) with the login_hint's address filled in, and the password
// leads to the consent page.
func TestChromiumSignInAgain(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Relying Party", "redirect_uris": []string{"http://127.0.0.1:9/cb"}}).
			Want(t, http.StatusCreated).Str("client_id")
		tab := c.tab()
		c.do(tab, "sign in", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.do(tab, "prompt=login", chromedp.Navigate(env.URL+"/oauth/authorize?"+url.Values{"response_type": {"code"}, "client_id": {client},
			"redirect_uri": {"http://127.0.0.1:9/cb"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
			"code_challenge_method": {"S256"}, "state": {"s"}, "scope": {"openid"}, "nonce": {"n"}, "prompt": {"login"},
			"login_hint": {a.Email}}.Encode()), chromedp.WaitVisible(chromedp.ID("password")))
		c.wantText(tab, "sign in again", "Sign in again to continue to the application.")
		if email, _ := chromedp.Run(tab, chromedp.Value(chromedp.ID("email"))); email != a.Email {
			t.Fatalf("email field = %q; want the login_hint %q", email, a.Email)
		}
		c.checkA11y(tab, "sign in again")
		if env.DB == "sqlite" {
			c.screenshot(tab, "signin-again-390", testenv.Updating())
		}
		c.do(tab, "the password", chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".tools-granted")))
		c.wantText(tab, "consent after signing in again", "Relying Party")
	})
}
