package pages_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumSignInStepPasskey: an account with a passkey (added on the
// passkeys page) and a TOTP factor signs in with its password and takes
// the second step with "Use a passkey" on /signin/mfa (the served
// script, the virtual authenticator answering), landing on next with an
// aal2 browser session.
func TestChromiumSignInStepPasskey(t *testing.T) {
	t.Parallel() // waits on Chromium or on mail jobs, not on the CPU
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		_, stepCtx, base, fail := passkeyBrowser(t, env)
		// No conditional UI: the virtual authenticator would answer it on
		// /signin, a passkey sign-in that needs no second step.
		if _, err := chromedp.Call(stepCtx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`}); err != nil {
			fail(err)
		}
		signIn := []chromedp.Action[chromedp.Void]{
			chromedp.Navigate(base + "/signin?next=%2Faccount%2Fpasskeys"),
			chromedp.WaitVisible(chromedp.ID("password")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email),
			chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
		}
		err := chromedp.Do(stepCtx, append(signIn,
			chromedp.WaitVisible(chromedp.ID("passkey-add")),
			chromedp.SendKeys(chromedp.ID("passkey-name"), "Chromium"),
			chromedp.Click(chromedp.ID("passkey-add")),
			chromedp.WaitVisible(chromedp.CSS(`li.passkey`)))...)
		if err != nil {
			fail(err)
		}
		access, _ := env.NewSession(t, a) // adding the passkey ended the others
		e := env.Call(t, "POST", "/v1/me/factors/totp", access, nil).Want(t, 201)
		env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", access, map[string]string{"code": totpNow(t, env, e.Str("secret"))}).Want(t, 200)
		// Confirming the factor ended the browser's session: sign in again.
		err = chromedp.Do(stepCtx, append(signIn,
			chromedp.WaitVisible(chromedp.ID("passkey-step")), // shown by the script
			chromedp.Click(chromedp.ID("passkey-step")))...)
		if err == nil {
			err = waitFor(stepCtx, `location.pathname === "/account/passkeys" && document.getElementById("passkey-add") !== null`)
		}
		if err != nil {
			fail(err)
		}
		var n int
		if err := env.SQL.DB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM sessions
			WHERE user_id = $1 AND revoked_at IS NULL AND aal = 'aal2' AND via = 'password' AND amr LIKE '%wk%'`, a.UserID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d live aal2 password sessions stepped up by a passkey (%v); want 1", n, err)
		}
	})
}
