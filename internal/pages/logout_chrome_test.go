package pages_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumLogout is an RP-initiated logout as a person meets it, in
// headless Chromium on both databases: a relying party sends the signed-in
// browser to /oauth/logout without an ID token, the confirmation page
// (axe-clean, no sideways scroll) asks, "Sign out" signs the browser out
// and returns it to the registered address with the state (the page's
// form-action allows that redirect); the signed-out page and the refusal
// of an unregistered address are checked too.
func TestChromiumLogout(t *testing.T) {
	c := newChrome(t, 390)
	rp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html lang="en"><title>Relying party</title><main><h1 id="rp">Back at the app</h1></main></html>`))
	}))
	t.Cleanup(rp.Close)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		back := rp.URL + "/signed-out"
		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Lab Notebook",
			"redirect_uris": []string{"http://127.0.0.1:9/cb"}, "post_logout_redirect_uris": []string{back}}).
			Want(t, http.StatusCreated).Str("client_id")
		a := env.Register(t)
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)

		q := url.Values{"client_id": {client}, "post_logout_redirect_uri": {back}, "state": {"st-42"}}
		c.do(tab, "logout request", chromedp.Navigate(env.URL+"/oauth/logout?"+q.Encode()),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/oauth/logout/confirm"]`)))
		c.wantText(tab, "confirmation", "Sign out?", "Lab Notebook asks to sign you out", a.Email)
		c.checkA11y(tab, "logout confirmation")
		c.fits(tab, "logout confirmation")
		if env.DB == "sqlite" {
			c.screenshot(tab, "logout-confirm-390", testenv.Updating())
		}
		c.do(tab, "sign out", chromedp.Click(chromedp.CSS(`form[action="/oauth/logout/confirm"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("rp")))
		loc, err := chromedp.Run(tab, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		if loc != back+"?state=st-42" {
			t.Fatalf("landed on %s; want %s?state=st-42", loc, back)
		}
		c.do(tab, "signed out", chromedp.Navigate(env.URL+"/oauth/logout"), chromedp.WaitVisible(chromedp.CSS("main h1")))
		c.wantText(tab, "signed-out page", "Signed out", "You are signed out")
		c.checkA11y(tab, "signed-out page")
		c.fits(tab, "signed-out page")
		if env.DB == "sqlite" {
			c.screenshot(tab, "logout-signed-out-390", testenv.Updating())
		}
		c.do(tab, "the console wants a sign-in", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("email")))

		bad := url.Values{"client_id": {client}, "post_logout_redirect_uri": {"https://evil.example/"}}
		c.do(tab, "unregistered address", chromedp.Navigate(env.URL+"/oauth/logout?"+bad.Encode()), chromedp.WaitVisible(chromedp.CSS("main h1")))
		c.wantText(tab, "refused", "Sign-out refused", "did not register")
		c.checkA11y(tab, "logout refused")
		if loc, err = chromedp.Run(tab, chromedp.Location()); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(loc, env.URL) {
			t.Fatalf("an unregistered address led to %s", loc)
		}
	})
}
