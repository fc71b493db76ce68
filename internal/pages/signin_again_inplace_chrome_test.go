package pages_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSignInAgainInPlace is signing in again in place as a person
// meets it, in headless Chromium on both databases, for three kinds of
// change: a personal key, a password and deleting the account. Each time
// the clock passes the recent sign-in window, the refused form answers
// with the sign-in form for the same account (checked by axe-core at 390
// and 1280 px, light and dark), and the password brings the person back to the page with
// the form ready to send, which then does what was asked.
func TestChromiumSignInAgainInPlace(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		tab := c.tab()
		signIn := func(what string) {
			c.do(tab, what, chromedp.SendKeys(chromedp.ID("password"), a.Password),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("resume-title")))
		}
		c.do(tab, "sign in", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))

		// A personal key.
		env.Clock.Advance(identity.ReauthWindow + 1)
		c.do(tab, "create a key", chromedp.Navigate(env.URL+"/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
			chromedp.SendKeys(chromedp.ID("key-name"), "kept key"),
			chromedp.Click(chromedp.CSS(`form[action="/account/keys"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("password")))
		c.wantText(tab, "sign in again", "Sign in again", "Sign in again to create")
		if email, _ := chromedp.Run(tab, chromedp.Value(chromedp.ID("email"))); email != a.Email {
			t.Fatalf("email field = %q; want %q", email, a.Email)
		}
		checkA11yBoth(c, tab, "sign in again")
		look(c, tab, "signin-again")
		signIn("sign in again for the key")
		c.wantText(tab, "key form kept", "You signed in again.", "Create the personal API key you filled in.", "kept key")
		if v, _ := chromedp.Run(tab, chromedp.Value(chromedp.ID("key-name"))); v != "kept key" {
			t.Fatalf("key name field = %q; want it kept", v)
		}
		checkA11yBoth(c, tab, "form kept")
		look(c, tab, "resume-keys")
		c.do(tab, "send it", chromedp.Click(chromedp.CSS(`form.resume button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("new-secret")))
		c.wantText(tab, "key made", "kept key")

		// The password: typed again, the rest kept.
		env.Clock.Advance(identity.ReauthWindow + 1)
		c.do(tab, "change the password", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("new_password")),
			chromedp.SendKeys(chromedp.ID("current_password"), a.Password), chromedp.SendKeys(chromedp.ID("new_password"), "a brand new passphrase"),
			chromedp.Click(chromedp.ID("revoke_api_keys")),
			chromedp.Click(chromedp.CSS(`form[action="/account/password"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("password")))
		signIn("sign in again for the password")
		c.wantText(tab, "password form kept", "Type your passwords again")
		checkA11yBoth(c, tab, "password form kept")
		look(c, tab, "resume-password")
		c.do(tab, "send it", chromedp.SendKeys(chromedp.ID("resume-current_password"), a.Password),
			chromedp.SendKeys(chromedp.ID("resume-new_password"), "a brand new passphrase"),
			chromedp.Click(chromedp.CSS(`form.resume button[type=submit]`)), chromedp.WaitNotPresent(chromedp.ID("resume-title")),
			chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "password saved", "personal API keys revoked")
		a.Password = "a brand new passphrase"

		// Deleting the account.
		env.Clock.Advance(identity.ReauthWindow + 1)
		c.do(tab, "delete the account", chromedp.Navigate(env.URL+"/account/delete"), chromedp.WaitVisible(chromedp.ID("confirm")),
			chromedp.SendKeys(chromedp.ID("confirm"), a.Email),
			chromedp.Click(chromedp.CSS(`form[action="/account/delete"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("password")))
		signIn("sign in again to delete")
		c.wantText(tab, "delete kept", "Delete your account, as you asked.")
		c.do(tab, "send it", chromedp.Click(chromedp.CSS(`form.resume button[type=submit]`)), chromedp.WaitNotPresent(chromedp.ID("resume-title")),
			chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "deleted", "Your account was deleted.")
		if strings.Contains(c.text(tab), "Something is not right") {
			t.Fatalf("the generic error page was shown")
		}
	})
}

// checkA11yWide runs axe-core on the page at 390 px and again at 1280 px,
// leaving the tab at 390 px.
func checkA11yWide(c *chrome, tab context.Context, page string) {
	c.t.Helper()
	c.checkA11y(tab, page+" at 390 px")
	c.do(tab, "1280 px", chromedp.EmulateViewport(1280, 900))
	c.checkA11y(tab, page+" at 1280 px")
	c.do(tab, "390 px", chromedp.EmulateViewport(390, 900))
}

// look writes the page as name.png into the folder GATEHOUSE_LOOK names,
// for a person to open; without it, it does nothing (nothing committed).
func look(c *chrome, tab context.Context, name string) {
	c.t.Helper()
	dir := os.Getenv("GATEHOUSE_LOOK")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
}
