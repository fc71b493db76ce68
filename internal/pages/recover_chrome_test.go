package pages_test

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumResetStep is a reset of an account with a second factor as
// a person takes it, in headless Chromium on both databases: the link's
// page asks for the new password and a code (checked by axe-core with and
// without an error), a wrong code shows the form again, and the right one
// sets the password and lands on the console.
func TestChromiumResetStep(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		m := verifiedTOTP(t, env)
		tok := resetToken(t, env, m.Email)
		tab := c.tab()
		const pw = "a chromium reset passphrase"
		c.do(tab, "open the link", chromedp.Navigate(env.URL+"/reset-password?token="+url.QueryEscape(tok)), chromedp.WaitVisible(chromedp.ID("code")))
		c.wantText(tab, "reset page", "Choose a new password", "Two-factor authentication", "Or a recovery code")
		c.checkA11y(tab, "reset with a factor")
		if env.DB == "sqlite" {
			c.screenshot(tab, "reset-factor-390", testenv.Updating())
		}
		wrong := "000000"
		if wrong == totpNow(t, env, m.Secret) {
			wrong = "111111"
		}
		c.do(tab, "a wrong code", chromedp.SendKeys(chromedp.ID("new_password"), pw), chromedp.SendKeys(chromedp.ID("code"), wrong),
			chromedp.Click(chromedp.CSS(`form[action="/reset-password"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(".error")))
		c.wantText(tab, "wrong code", "Invalid or already used code")
		c.checkA11y(tab, "reset with a wrong code")
		c.do(tab, "the right code", chromedp.SendKeys(chromedp.ID("new_password"), pw), chromedp.SendKeys(chromedp.ID("code"), totpNow(t, env, m.Secret)),
			chromedp.Click(chromedp.CSS(`form[action="/reset-password"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(tab, "console after the reset", "Welcome, Test User")
		env.Login(t, m.Email, pw).Want(t, 200)
	})
}
