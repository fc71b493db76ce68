package pages_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumGerman: a browser asking for German (Accept-Language: de)
// signs in and goes through the console in German, axe-clean at 390 and
// 1280 px in light and dark; then the person chooses English on the
// account page and the console follows it over the browser's German.
func TestChromiumGerman(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		org := env.TeamOrg(t, "Hafen", [2]string{a.UserID, "owner"}, [2]string{env.Register(t).UserID, "member"})
		tab := c.tab()
		if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "de-DE,de;q=0.9"}}); err != nil {
			t.Fatal(err)
		}
		c.do(tab, "sign-in page", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")))
		c.wantText(tab, "sign-in page", "Anmelden", "Passwort vergessen?", "Kein Passwort?")
		c.checkA11y(tab, "German sign-in")
		chromeSignIn(c, tab, env.URL, a)
		pages := []struct{ path, wait, text string }{
			{"/", "#ws-title", "Ihre Arbeitsbereiche"},
			{"/account", "#language", "Sprache"},
			{"/account/sessions", ".list", "Alle anderen Sitzungen abmelden"},
			{"/workspaces/" + org + "/members", "#q", "Mitglieder"},
		}
		for _, mode := range []struct {
			width  int64
			scheme string
		}{{390, "light"}, {1280, "dark"}} {
			c.do(tab, "viewport", chromedp.EmulateViewport(mode.width, 900))
			colorScheme(t, tab, mode.scheme)
			for _, p := range pages {
				c.do(tab, p.path, chromedp.Navigate(env.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
				c.wantText(tab, p.path, p.text)
				c.checkA11y(tab, p.path+" in German, "+mode.scheme)
			}
		}
		colorScheme(t, tab, "light")
		c.do(tab, "phone", chromedp.EmulateViewport(390, 900), chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("language")))
		c.screenshot(tab, "account-de-390", testenv.Updating() && env.DB == testenv.Databases[0])

		// English chosen on the account page wins over the browser's German.
		c.do(tab, "choose English", chromedp.SetValue(chromedp.ID("language"), "en"),
			chromedp.Click(chromedp.CSS(`form[action="/account/profile"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "English chosen", "Profile saved.", "Language")
		c.checkA11y(tab, "account in English")
	})
}

// colorScheme makes tab prefer scheme ("light", "dark").
func colorScheme(t *testing.T, tab context.Context, scheme string) {
	t.Helper()
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		t.Fatal(err)
	}
}
