package pages_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSocialAndDiscovery is social sign-in and home-realm
// discovery as a person meets them, in headless Chromium on both
// databases: the provider's button on the sign-in and sign-up pages
// (axe-clean) signs a new person in; an address of a domain whose
// workspace enforces SSO, sent without a password, is sent on (a page
// linking to the provider) to the workspace's identity provider and comes
// back signed in; an address
// with no connection is told so on the page.
func TestChromiumSocialAndDiscovery(t *testing.T) {
	c := newChrome(t, 390)
	idp := ssotest.New(t)
	opts := testenv.Options{AllowPrivate: true, Social: []sso.SocialProvider{{Name: "acme", Label: "Acme ID", Issuer: idp.URL,
		ClientID: ssotest.Client, ClientSecret: ssotest.Secret}}}
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		c.t = t
		tab := c.tab()
		c.do(tab, "the sign-up page", chromedp.Navigate(env.URL+"/signup"), chromedp.WaitVisible(chromedp.ID("email")))
		c.wantText(tab, "sign-up buttons", "Continue with Acme ID")
		c.checkA11y(tab, "signup with a provider")
		c.do(tab, "the sign-in page", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")))
		c.wantText(tab, "sign-in buttons", "Continue with Acme ID", "Sign in with single sign-on")
		c.checkA11y(tab, "signin with a provider")
		idp.SetClaims(map[string]any{"sub": "c-" + testenv.RandomHex(3), "email": "c-" + testenv.RandomHex(3) + "@example.com", "name": "Cleo Social"})
		c.do(tab, "continue with the provider", chromedp.Click(chromedp.CSS(`a[href^="/v1/sso/social/acme/start"]`)),
			chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(tab, "console after social sign-in", "Welcome, Cleo Social")

		owner, org := env.Team(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Token, org, domain, "")
		env.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Token, map[string]any{"name": "Acme IdP", "issuer": idp.URL, "client_id": ssotest.Client,
			"client_secret": ssotest.Secret, "domains": []string{domain}, "enforce": true}).Want(t, 200)
		email := "d-" + testenv.RandomHex(3) + "@" + domain
		idp.SetClaims(map[string]any{"sub": "d-" + testenv.RandomHex(3), "email": email, "name": "Dana Domain"})
		hrd := c.tab()
		c.do(hrd, "the address alone", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), email),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]:not([formaction])`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href^="/v1/sso/start"]`)))
		c.wantText(hrd, "on to the provider", "Continue to Acme IdP")
		c.checkA11y(hrd, "continue to single sign-on")
		c.do(hrd, "on to the provider", chromedp.Click(chromedp.CSS(`a[href^="/v1/sso/start"]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(hrd, "console after discovery", "Welcome, Dana Domain")

		none := c.tab()
		c.do(none, "an address without SSO", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), "nobody-"+testenv.RandomHex(3)+"@example.org"),
			chromedp.Click(chromedp.CSS(`button[formaction="/signin/sso"]`)),
			chromedp.WaitVisible(chromedp.CSS(".error")))
		c.wantText(none, "no connection", "No single sign-on is set up for this address")
		c.checkA11y(none, "signin with the discovery error")
	})
}
