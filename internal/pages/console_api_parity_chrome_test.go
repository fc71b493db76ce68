package pages_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumConsoleParity is issue 30 items 8 and 9 as a person meets
// them, in headless Chromium on both databases, every page checked by
// axe-core at 390 and 1280 px in light and dark mode: the home page's
// offer of the workspace of the person's domain, joined with one click;
// the settings page's two-factor switch; a passkey renamed; a key form
// sent with no tool; a check-your-email page with "Send again"; a used
// reset link.
func TestChromiumConsoleParity(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner := env.Register(t)
		org := env.TeamOrg(t, "Domain Works", [2]string{owner.UserID, "owner"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "suggest")
		a := env.RegisterAt(t, domain)
		env.VerifyEmail(t, a)
		r := env.Call(t, "POST", "/v1/me/passkeys/begin", a.Access, nil).Want(t, 200)
		var o passkeytest.Options
		json.Unmarshal(r.Body, &o)
		_, att, err := passkeytest.New("http://web.test", "web.test").Create(&o)
		if err != nil {
			t.Fatal(err)
		}
		env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, map[string]any{"ceremony_id": o.CeremonyID, "credential": att, "name": "Desk key"}).Want(t, 201)

		tab := c.tab()
		c.do(tab, "sign in", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("offer-title")))
		c.wantText(tab, "offer", "Join Domain Works", domain)
		checkA11yBoth(c, tab, "home with an offer")
		look(c, tab, "home-offer")
		c.do(tab, "join", chromedp.Click(chromedp.CSS(`form[action="/join"] button`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "joined", "You joined the workspace.", "Domain Works")

		c.do(tab, "passkeys", chromedp.Navigate(env.URL+"/account/passkeys"), chromedp.WaitVisible(chromedp.CSS(`form[action="/account/passkeys/rename"] input[name=name]`)))
		c.wantText(tab, "passkey times", "Desk key", "added ", "never used yet")
		c.do(tab, "rename", chromedp.SendKeys(chromedp.CSS(`form[action="/account/passkeys/rename"] input[name=name]`), "Travel key"),
			chromedp.Click(chromedp.CSS(`form[action="/account/passkeys/rename"] button`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "renamed", "Passkey renamed to “Travel key”.")
		checkA11yBoth(c, tab, "passkeys")
		look(c, tab, "passkeys")

		c.do(tab, "no tools", chromedp.Navigate(env.URL+"/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
			chromedp.SendKeys(chromedp.ID("key-name"), "nothing"), chromedp.Click(chromedp.ID("scope-some")),
			chromedp.Click(chromedp.CSS(`form[action="/account/keys"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("tools-error")))
		c.wantText(tab, "no tools refused", "Tick at least one tool, or choose every tool.")
		checkA11yBoth(c, tab, "key form without tools")

		ob := c.tab()
		c.do(ob, "owner signs in", chromedp.Navigate(env.URL+"/signin?"+url.Values{"next": {"/workspaces/" + org + "/settings"}}.Encode()),
			chromedp.WaitVisible(chromedp.ID("email")), chromedp.SendKeys(chromedp.ID("email"), owner.Email), chromedp.SendKeys(chromedp.ID("password"), owner.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("mfa-title")))
		c.do(ob, "require two-factor", chromedp.Click(chromedp.CSS(`form[action$="/settings/two-factor"] button`)), chromedp.WaitVisible(chromedp.ID("require_mfa-error")))
		c.wantText(ob, "refused on the page", "Set up two-factor authentication for yourself before requiring it")
		checkA11yBoth(c, ob, "settings with the switch")
		look(c, ob, "settings-two-factor")

		anon := c.tab()
		c.do(anon, "recover", chromedp.Navigate(env.URL+"/recover"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), owner.Email), chromedp.Click(chromedp.CSS(`form[action="/recover"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`form.resend`)))
		checkA11yBoth(c, anon, "check your email")
		look(c, anon, "check-your-email")
		c.do(anon, "send again", chromedp.Click(chromedp.CSS(`form.resend button`)), chromedp.WaitVisible(chromedp.CSS(`form.resend`)))
		tok := env.WaitMailToken(t, owner.Email, "http://web.test/reset-password?token=", 2)
		c.do(anon, "reset", chromedp.Navigate(env.URL+"/reset-password?token="+url.QueryEscape(tok)), chromedp.WaitVisible(chromedp.ID("new_password")),
			chromedp.SendKeys(chromedp.ID("new_password"), "a chromium reset passphrase"),
			chromedp.Click(chromedp.CSS(`form[action="/reset-password"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.do(anon, "the link again", chromedp.Navigate(env.URL+"/reset-password?token="+url.QueryEscape(tok)), chromedp.WaitVisible(chromedp.CSS(`a[href="/recover"]`)))
		c.wantText(anon, "used link", "This link to choose a new password was used already")
		checkA11yBoth(c, anon, "used reset link")
	})
}
