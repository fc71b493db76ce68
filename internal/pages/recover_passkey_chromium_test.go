package pages_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumResetPasskey: an account with a confirmed address, a
// passkey (added on the passkeys page) and a TOTP factor opens a reset
// link; the page offers "Use a passkey instead" (the served script), which
// with the new password typed sets it, with the virtual authenticator's
// assertion as the second factor, and lands on the console with an aal2
// browser session.
func TestChromiumResetPasskey(t *testing.T) {
	t.Parallel() // waits on Chromium or on mail jobs, not on the CPU
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		_, stepCtx, base, fail := passkeyBrowser(t, env)
		env.Call(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": env.WaitMailToken(t, a.Email, base+"/verify-email?token=", 1)}).Want(t, 200)
		if _, err := chromedp.Call(stepCtx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`}); err != nil {
			fail(err)
		}
		err := chromedp.Do(stepCtx, chromedp.Navigate(base+"/signin?next=%2Faccount%2Fpasskeys"),
			chromedp.WaitVisible(chromedp.ID("password")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email),
			chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("passkey-add")),
			chromedp.SendKeys(chromedp.ID("passkey-name"), "Chromium"),
			chromedp.Click(chromedp.ID("passkey-add")),
			chromedp.WaitVisible(chromedp.CSS(`li.passkey`)))
		if err != nil {
			fail(err)
		}
		access, _ := env.NewSession(t, a)
		e := env.Call(t, "POST", "/v1/me/factors/totp", access, nil).Want(t, 201)
		env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", access, map[string]string{"code": totpNow(t, env, e.Str("secret"))}).Want(t, 200)

		link := base + "/reset-password?token="
		env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": a.Email}).Want(t, 200)
		tok := env.WaitMailToken(t, a.Email, link, 1)
		const pw = "a passkey reset passphrase"
		err = chromedp.Do(stepCtx, chromedp.Navigate(link+url.QueryEscape(tok)),
			chromedp.WaitVisible(chromedp.ID("passkey-reset")), // shown by the script
			chromedp.Click(chromedp.ID("passkey-reset")),
			chromedp.WaitVisible(chromedp.ID("passkey-error")), // no password yet
			chromedp.SendKeys(chromedp.ID("new_password"), pw),
			chromedp.Click(chromedp.ID("passkey-reset")))
		if err == nil {
			err = waitFor(stepCtx, `location.pathname === "/" && document.getElementById("ws-title") !== null`)
		}
		if err != nil {
			fail(err)
		}
		var n int
		if err := env.SQL.DB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM sessions
			WHERE user_id = $1 AND revoked_at IS NULL AND aal = 'aal2' AND via = 'magic_link' AND amr LIKE '%wk%'`, a.UserID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d live aal2 sessions of a reset with a passkey (%v); want 1", n, err)
		}
		env.Login(t, a.Email, pw).Want(t, 200)
	})
}
