package pages_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSignInStep is the second step as a person takes it, in
// headless Chromium on both databases: the password on /signin, then the
// step page (checked by axe-core with and without an error), a wrong code
// and the right one, landing on the console.
func TestChromiumSignInStep(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		m := withTOTP(t, env)
		tab := c.tab()
		c.do(tab, "sign in with the password", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("password"), m.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("code")))
		c.wantText(tab, "step page", "Two-step verification", "Use a recovery code")
		c.checkA11y(tab, "mfa")
		wrong := "000000"
		if wrong == totpNow(t, env, m.Secret) {
			wrong = "111111"
		}
		c.do(tab, "a wrong code", chromedp.SendKeys(chromedp.ID("code"), wrong),
			chromedp.Click(chromedp.CSS(`form[action="/signin/mfa"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(".error")))
		c.wantText(tab, "wrong code", "Invalid or already used code")
		c.checkA11y(tab, "mfa with an error")
		if env.DB == "sqlite" {
			c.screenshot(tab, "signin-step-390", testenv.Updating())
		}
		c.do(tab, "the right code", chromedp.SendKeys(chromedp.ID("code"), totpNow(t, env, m.Secret)),
			chromedp.Click(chromedp.CSS(`form[action="/signin/mfa"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(tab, "console after the step", "Welcome, Test User")
	})
}
