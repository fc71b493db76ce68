package pages_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumTwoFactor sets up an authenticator app on /account/two-factor
// as a person does, in headless Chromium on both databases: each state of
// the page (off, the enrolment with its QR code drawn, a wrong code, the
// recovery codes) passes axe-core and fits at 360 px and at desktop width;
// after the first code this browser stays signed in and a sign-in
// elsewhere asks for the second step.
func TestChromiumTwoFactor(t *testing.T) {
	c := newChrome(t, 360)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)
		check := func(name string) {
			t.Helper()
			for _, w := range []int64{360, 1280} {
				c.do(tab, "viewport", chromedp.EmulateViewport(w, 900))
				c.checkA11y(tab, name)
				c.fits(tab, name)
			}
			c.do(tab, "viewport", chromedp.EmulateViewport(360, 900))
		}
		c.do(tab, "two-factor page", chromedp.Navigate(env.URL+"/account/two-factor"), chromedp.WaitVisible(chromedp.CSS(`form[action="/account/two-factor/totp"]`)))
		c.wantText(tab, "two-factor off", "Two-factor sign-in is off.")
		check("two-factor off")
		c.do(tab, "set up", chromedp.Click(chromedp.CSS(`form[action="/account/two-factor/totp"] button`)), chromedp.WaitVisible(chromedp.ID("code")),
			chromedp.WaitVisible(chromedp.CSS(`button[data-copy="totp-secret"]`)))
		c.wantQR(tab)
		check("two-factor enrolment")
		secret, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("totp-secret").textContent`))
		if err != nil || len(secret) != 32 {
			t.Fatalf("setup key = %q (%v)", secret, err)
		}
		wrong := "000000"
		if wrong == totpNow(t, env, secret) {
			wrong = "111111"
		}
		confirm := chromedp.Click(chromedp.CSS(`form[action="/account/two-factor/confirm"] button[type=submit]`))
		c.do(tab, "a wrong code", chromedp.SendKeys(chromedp.ID("code"), wrong), confirm, chromedp.WaitVisible(chromedp.ID("code-error")))
		c.wantQR(tab)
		check("two-factor wrong code")
		c.do(tab, "the right code", chromedp.SendKeys(chromedp.ID("code"), totpNow(t, env, secret)), confirm,
			chromedp.WaitVisible(chromedp.CSS(`button[data-copy="recovery-codes"]`)))
		c.wantText(tab, "codes", "Save your recovery codes now", "Authenticator app added")
		check("two-factor recovery codes")
		c.do(tab, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`form[action="/account/two-factor/recovery-codes"]`)))
		if strings.Contains(c.text(tab), "Save your recovery codes") {
			t.Fatalf("the codes are shown again on reload")
		}
		c.do(tab, "the next page", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("name")))
		c.wantText(tab, "next page", a.Email)

		elsewhere := c.tab()
		c.do(elsewhere, "sign in elsewhere", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("code")))
		c.wantText(elsewhere, "step elsewhere", "Two-step verification")
	})
}

// wantQR checks that the enrolment's QR code image loaded (the page's CSP
// lets a data: image through).
func (c *chrome) wantQR(tab context.Context) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const i = document.querySelector("img.qr"); return !!i && i.complete && i.naturalWidth > 0 })()`)); err != nil {
		c.t.Fatalf("the QR code is not drawn: %v", err)
	}
}
