package pages_test

import (
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumPasskeyWordsInGerman: the passkey script's own message (a
// ceremony the person cancelled) is German on a German sign-in page: it
// comes from its tag's data attributes, which the template fills through
// the catalogue.
func TestChromiumPasskeyWordsInGerman(t *testing.T) {
	t.Parallel() // waits on Chromium, not on the CPU
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		_, stepCtx, base, fail := passkeyBrowser(t, env)
		// The person cancels: the browser's WebAuthn dialog answers
		// NotAllowedError at once.
		if _, err := chromedp.Call(stepCtx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
navigator.credentials.get = () => Promise.reject(new DOMException("cancelled", "NotAllowedError"));`}); err != nil {
			fail(err)
		}
		if _, err := chromedp.Call(stepCtx, network.Enable, network.EnableParams{}); err != nil {
			fail(err)
		}
		if _, err := chromedp.Call(stepCtx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "de-DE,de;q=0.9"}}); err != nil {
			fail(err)
		}
		err := chromedp.Do(stepCtx, chromedp.Navigate(base+"/signin"),
			chromedp.WaitVisible(chromedp.ID("passkey-signin")),
			chromedp.Click(chromedp.ID("passkey-signin")),
			chromedp.WaitVisible(chromedp.ID("passkey-error")))
		if err != nil {
			fail(err)
		}
		text, err := chromedp.Run(stepCtx, chromedp.Text(chromedp.ID("passkey-error")))
		if err != nil {
			fail(err)
		}
		if want := "Die Passkey-Anfrage wurde abgebrochen oder ist abgelaufen."; text != want {
			t.Fatalf("the script says %q; want %q", text, want)
		}
	})
}
