package pages_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumPasskeySignInAgain is issue 30 item 2 for passkeys, in
// headless Chromium with a virtual authenticator, on both databases:
// adding a passkey once the sign-in is too old answers with the sign-in
// form for the same account, which comes back to the passkeys page with
// the named passkey ready to add; its button adds it.
func TestChromiumPasskeySignInAgain(t *testing.T) {
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		_, stepCtx, base, fail := passkeyBrowser(t, env)
		err := chromedp.Do(stepCtx,
			chromedp.Navigate(base+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
		if err != nil {
			fail(err)
		}
		env.Clock.Advance(identity.ReauthWindow + 1)
		err = chromedp.Do(stepCtx,
			chromedp.Navigate(base+"/account/passkeys"), chromedp.WaitVisible(chromedp.ID("passkey-add")),
			chromedp.SendKeys(chromedp.ID("passkey-name"), "Desk key"), chromedp.Click(chromedp.ID("passkey-add")),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"] #password`)))
		if err != nil {
			fail(err)
		}
		text, _ := chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS("main")))
		if !strings.Contains(text, "Sign in again to add a passkey") {
			t.Fatalf("the refusal says:\n%s", text)
		}
		err = chromedp.Do(stepCtx, chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("resume-title")))
		if err != nil {
			fail(err)
		}
		if loc, _ := chromedp.Run(stepCtx, chromedp.Location()); loc != base+"/account/passkeys" {
			t.Fatalf("signing in again came back to %s", loc)
		}
		text, _ = chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS("main")))
		if !strings.Contains(text, "Add the passkey you named") || !strings.Contains(text, "Desk key") {
			t.Fatalf("the kept form says:\n%s", text)
		}
		if err := chromedp.Do(stepCtx, chromedp.Click(chromedp.CSS(`form.resume button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("li.passkey"))); err != nil {
			fail(err)
		}
		if listed, _ := chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS("ul.passkeys"))); !strings.Contains(listed, "Desk key") {
			t.Fatalf("passkeys listed: %q", listed)
		}
	})
}
