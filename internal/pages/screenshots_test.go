package pages_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScreenshots rewrites docs/screenshots/ (the README shows some of
// them): the main console pages at desktop (1280 px) and phone (390 px)
// width, on SQLite. It runs only with -update:
//
//	go test ./internal/pages -run TestScreenshots -update
//
// The pages themselves are tested by TestChromiumConsole.
func TestScreenshots(t *testing.T) {
	if !testenv.Updating() {
		t.Skip("writes docs/screenshots only with -update")
	}
	c := newChrome(t, 1280)
	env := testenv.New(t, testenv.Databases[0], testenv.Options{})
	a := env.Register(t)
	acme := env.TeamOrg(t, "Acme Research", [2]string{a.UserID, "owner"}, [2]string{env.Register(t).UserID, "member"},
		[2]string{env.Register(t).UserID, "admin"}, [2]string{env.Register(t).UserID, "billing"})
	tab := c.tab()
	signedIn(t, env, a) // a second session to list
	c.do(tab, "sign in", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")))
	c.do(tab, "viewport", chromedp.EmulateViewport(390, 800))
	c.screenshot(tab, "signin-390", true)
	c.do(tab, "sign in", chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
	// Each page at one width, desktop or phone, to keep the repository small.
	shots := []struct {
		name  string
		width int64
		steps []chromedp.Action[chromedp.Void]
	}{
		{"home", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/"), chromedp.WaitVisible(chromedp.ID("ws-title"))}},
		{"account", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/account"), chromedp.WaitVisible(chromedp.ID("name"))}},
		{"sessions", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/account/sessions"), chromedp.WaitVisible(chromedp.CSS(".list"))}},
		{"keys", 390, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
			chromedp.SendKeys(chromedp.ID("key-name"), "backup script"),
			chromedp.Click(chromedp.CSS(`form[action="/account/keys"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("new-secret"))}},
		{"members", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/members"), chromedp.WaitVisible(chromedp.ID("q"))}},
		{"invitations", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/invitations"), chromedp.WaitVisible(chromedp.ID("emails")),
			chromedp.SendKeys(chromedp.ID("emails"), "new.colleague@example.com"), chromedp.Click(chromedp.CSS(`form:has(#emails) button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(".notice"))}},
		{"overview", 390, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme), chromedp.WaitVisible(chromedp.CSS(".facts"))}},
		{"team", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/teams"), chromedp.WaitVisible(chromedp.ID("name")),
			chromedp.SendKeys(chromedp.ID("name"), "Lab crew"), chromedp.Click(chromedp.CSS(`form[action$="/teams"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("email"))}},
		{"audit", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/audit"), chromedp.WaitVisible(chromedp.ID("action"))}},
		{"domains", 1280, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/domains"), chromedp.WaitVisible(chromedp.ID("domain")),
			chromedp.SendKeys(chromedp.ID("domain"), "acme-research.example"), chromedp.Click(chromedp.CSS(`form[action$="/domains"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`button[data-copy="txt-value-0"]`))}},
		{"settings", 390, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/workspaces/" + acme + "/settings"), chromedp.WaitVisible(chromedp.ID("slug"))}},
		{"consent", 390, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/oauth/authorize?" + consentQuery(t, env)), chromedp.WaitVisible(chromedp.CSS(".tools-granted"))}},
		{"delete", 390, []chromedp.Action[chromedp.Void]{chromedp.Navigate(env.URL + "/account/delete"), chromedp.WaitVisible(chromedp.ID("confirm")),
			chromedp.SendKeys(chromedp.ID("confirm"), a.Email),
			chromedp.Click(chromedp.CSS(`form[action="/account/delete"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".card.warn"))}},
	}
	for _, s := range shots {
		c.do(tab, s.name, append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(s.width, 800)}, s.steps...)...)
		c.screenshot(tab, fmt.Sprintf("%s-%d", s.name, s.width), true)
	}
	twoFactorShots(t, c, env)
	tab = c.tab() // signed out
	c.do(tab, "sign-up", chromedp.Navigate(env.URL+"/signup"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), "another passphrase"),
		chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("email-error")))
	c.do(tab, "viewport", chromedp.EmulateViewport(390, 800))
	c.screenshot(tab, "signup-taken-390", true)
}

// consentQuery registers an application and returns the query of an
// authorization request of it, for the consent page's screenshot.
func consentQuery(t *testing.T, env *testenv.Env) string {
	client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Lab Notebook", "redirect_uris": []string{"https://notebook.example/cb"}}).
		Want(t, http.StatusCreated).Str("client_id")
	return url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"https://notebook.example/cb"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "state": {"s"}, "scope": {"openid profile"}}.Encode()
}

// twoFactorShots takes the two-factor page of a new account: setting up an
// authenticator app (desktop), then the recovery codes (phone).
func twoFactorShots(t *testing.T, c *chrome, env *testenv.Env) {
	tab := c.tab()
	chromeSignIn(c, tab, env.URL, env.Register(t))
	c.do(tab, "two-factor", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(env.URL+"/account/two-factor"),
		chromedp.Click(chromedp.CSS(`form[action="/account/two-factor/totp"] button`)), chromedp.WaitVisible(chromedp.ID("code")))
	c.wantQR(tab)
	c.screenshot(tab, "twofactor-1280", true)
	secret, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("totp-secret").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	c.do(tab, "two-factor codes", chromedp.SendKeys(chromedp.ID("code"), totpNow(t, env, secret)),
		chromedp.Click(chromedp.CSS(`form[action="/account/two-factor/confirm"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")), chromedp.EmulateViewport(390, 800))
	c.screenshot(tab, "twofactor-codes-390", true)
}
