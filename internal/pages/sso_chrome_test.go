package pages_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSSOSetup is the SSO set-up as an owner meets it, in headless
// Chromium on both databases, each page axe-clean: the workspace's SSO
// page; the OpenID Connect set-up showing the redirect URI to paste, a
// refusal next to its field, then the new connection's page showing it
// again; the SAML set-up with pasted metadata, whose connection's page
// shows our entity ID, ACS URL and metadata URL. Under -update it writes
// screenshots at 390 and 1280 px (docs/screenshots/sso-*.png, not kept
// in the repository).
func TestChromiumSSOSetup(t *testing.T) {
	c := newChrome(t, 390)
	idp := ssotest.New(t)
	testenv.RunWith(t, ssoOpts, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner := env.Register(t)
		org := env.TeamOrg(t, "Acme", [2]string{owner.UserID, "owner"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "")
		base := env.URL + "/workspaces/" + org + "/sso"
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, owner)
		c.do(tab, "the SSO page", chromedp.Navigate(env.URL+"/workspaces/"+org), chromedp.WaitVisible(chromedp.CSS(`a[href$="/sso"]`)),
			chromedp.Click(chromedp.CSS(`.org-nav a[href$="/sso"]`)), chromedp.WaitVisible(chromedp.ID("list-title")))
		c.wantText(tab, "no connection", "This workspace has no SSO connection.")
		c.checkA11y(tab, "sso list")

		c.do(tab, "add OIDC", chromedp.Click(chromedp.CSS(`a[href$="/sso/new/oidc"]`)), chromedp.WaitVisible(chromedp.ID("issuer")))
		c.wantText(tab, "redirect URI first", env.URL+"/v1/sso/callback")
		c.checkA11y(tab, "sso new oidc")
		c.shot(tab, "sso-new-oidc")
		c.do(tab, "a bad issuer", chromedp.SendKeys(chromedp.ID("issuer"), "not a url"), chromedp.SendKeys(chromedp.ID("client_id"), ssotest.Client),
			chromedp.SendKeys(chromedp.ID("client_secret"), ssotest.Secret),
			chromedp.Click(chromedp.CSS(`form[action$="/sso/new/oidc"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("issuer-error")))
		c.wantText(tab, "issuer refused", "Issuer must be the identity provider's https issuer URL")
		c.checkA11y(tab, "sso new oidc refused")
		c.do(tab, "add OIDC", chromedp.SetValue(chromedp.ID("issuer"), idp.URL), chromedp.SendKeys(chromedp.ID("client_secret"), ssotest.Secret),
			chromedp.Click(chromedp.CSS(`form[action$="/sso/new/oidc"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("setup-title")))
		c.wantText(tab, "the OIDC connection", "The connection Single sign-on was added.", env.URL+"/v1/sso/callback", domain)
		c.checkA11y(tab, "sso oidc connection")
		c.shot(tab, "sso-oidc")

		c.do(tab, "add SAML", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("list-title")),
			chromedp.Click(chromedp.CSS(`a[href$="/sso/new/saml"]`)), chromedp.WaitVisible(chromedp.ID("metadata_xml")))
		c.checkA11y(tab, "sso new saml")
		c.shot(tab, "sso-new-saml")
		// The OIDC connection serves the one domain: a second connection
		// needs another.
		other := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, other, "")
		c.do(tab, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("metadata_xml")))
		c.do(tab, "paste metadata", chromedp.SetValue(chromedp.ID("name"), "Okta"),
			chromedp.SetValue(chromedp.ID("metadata_xml"), idpMetadata(t, "https://acme.okta.example")),
			chromedp.Click(chromedp.CSS(`input[value="`+domain+`"]`)),
			chromedp.Click(chromedp.CSS(`form[action$="/sso/new/saml"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("sp-entity-id")))
		entity, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("sp-entity-id")))
		if err != nil || entity == "" {
			t.Fatalf("entity id shown %q (%v)", entity, err)
		}
		c.wantText(tab, "the SAML connection", "The connection Okta was added.", "/acs", "https://acme.okta.example/entity")
		c.checkA11y(tab, "sso saml connection")
		c.shot(tab, "sso-saml")
		c.do(tab, "the list", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("list-title")))
		c.wantText(tab, "both listed", "Single sign-on", "Okta", "SAML", "OpenID Connect")
		c.shot(tab, "sso-list")
	})
}

// shot writes the page at the chrome's width and at 1280 px under -update.
func (c *chrome) shot(tab context.Context, name string) {
	c.t.Helper()
	if !testenv.Updating() {
		return
	}
	c.screenshot(tab, name+"-390", true)
	c.do(tab, "desktop", chromedp.EmulateViewport(1280, 900))
	c.screenshot(tab, name+"-1280", true)
	c.do(tab, "phone", chromedp.EmulateViewport(int64(c.width), 900))
}

// TestChromiumSSOSAMLKeys is a SAML connection's key rotation on its
// page in headless Chromium on both databases, axe-clean at 390 and 1280
// px (light and dark), without sideways scrolling: the current
// certificate, a next key added, the confirmation dialog before making
// it current, then the next key alone. Under -update it writes
// docs/screenshots/sso-saml-keys-{390,1280}.png (both keys shown).
func TestChromiumSSOSAMLKeys(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner := env.Register(t)
		org := env.TeamOrg(t, "Acme", [2]string{owner.UserID, "owner"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "")
		conn := env.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Access, map[string]any{"type": "saml", "name": "Okta", "domains": []string{domain},
			"saml": map[string]any{"metadata_xml": idpMetadata(t, "https://acme.okta.example")}}).Want(t, 200).Str("connection.id")
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, owner)
		c.do(tab, "the connection", chromedp.Navigate(env.URL+"/workspaces/"+org+"/sso/"+conn), chromedp.WaitVisible(chromedp.ID("sp-keys-title")))
		c.wantText(tab, "one key", "Current key", "Signs", "Add a next key")
		checkA11yBoth(c, tab, "sso saml keys")
		c.do(tab, "add a next key", chromedp.Click(chromedp.CSS(`form input[value="stage"] ~ button`)),
			chromedp.WaitReady(chromedp.CSS(`input[value="promote"]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "two keys", "A next key was added.", "Next key", "Published, not signing yet")
		checkA11yBoth(c, tab, "sso saml keys staged")
		noSidewaysScroll(c, tab, "sso saml keys staged")
		c.do(tab, "to the keys", chromedp.ScrollIntoView(chromedp.ID("sp-keys-title")))
		c.shot(tab, "sso-saml-keys")
		c.do(tab, "make it current", chromedp.Click(chromedp.CSS(`form input[value="promote"] ~ button`)),
			chromedp.WaitVisible(chromedp.CSS(`dialog.confirm-dialog[open] button`)))
		c.wantText(tab, "the dialog", "Make the next key of Okta current?")
		checkA11yBoth(c, tab, "sso saml keys confirmation")
		// The page after the promotion offers a next key again.
		c.do(tab, "confirm", chromedp.Click(chromedp.CSS(`dialog.confirm-dialog form button[type=submit]`)),
			chromedp.WaitReady(chromedp.CSS(`input[value="stage"]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "promoted", "The next key is current", "Current key", "Add a next key")
		if n := c.count(tab, `[id^="sp-cert-"]`); n != 1 {
			t.Fatalf("%d certificates shown after the promotion; want 1", n)
		}
	})
}
