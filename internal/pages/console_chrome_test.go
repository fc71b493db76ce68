package pages_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumConsole is the console as a person uses it, in headless
// Chromium on both databases: sign up on /signup, confirm the address with
// the mailed link, land on the console, edit the profile, create a
// personal key (its secret shown once: a reload does not show it), revoke
// it, see this browser marked on the sessions page and sign out a second
// device, and be told why the account cannot be deleted while it alone
// owns a workspace with members. axe-core checks every page it visits.
func TestChromiumConsole(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		tab := c.tab()
		email, pw := testenv.Email(), "a chromium passphrase"
		c.do(tab, "open /signup", chromedp.Navigate(env.URL+"/signup"), chromedp.WaitVisible(chromedp.ID("email")))
		c.checkA11y(tab, "signup")
		// A refused password: the message next to the field, the address kept.
		c.do(tab, "sign up with a short password",
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("name"), "Chromium Person"),
			chromedp.SendKeys(chromedp.ID("password"), "short"),
			chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("password-error")))
		c.checkA11y(tab, "signup with an error")
		if v, _ := chromedp.Run(tab, chromedp.Value(chromedp.ID("email"))); v != email {
			t.Fatalf("typed address not kept: %q", v)
		}
		c.do(tab, "sign up",
			chromedp.SendKeys(chromedp.ID("password"), pw),
			chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(tab, "console home", "Welcome, Chromium Person", "is not confirmed yet")
		c.checkA11y(tab, "home")

		// The address taken, in another browser: the error's "Sign in" link
		// opens the sign-in page with the address typed in.
		other := c.tab()
		c.do(other, "sign up with a taken address", chromedp.Navigate(env.URL+"/signup"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), "another chromium passphrase"),
			chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("email-error")))
		c.checkA11y(other, "signup with a taken address")
		c.do(other, "sign in instead", chromedp.Click(chromedp.CSS(`#email-error a[href^="/signin"]`)), chromedp.WaitVisible(chromedp.ID("password")))
		if v, _ := chromedp.Run(other, chromedp.Value(chromedp.ID("email"))); v != email {
			t.Fatalf("sign-in page after the taken address: email field %q; want %q", v, email)
		}
		c.checkA11y(other, "signin with the address handed on")

		tok := env.MailToken(t, email, "http://web.test/verify-email?token=")
		c.do(tab, "confirm the address", chromedp.Navigate(env.URL+"/verify-email?token="+url.QueryEscape(tok)),
			chromedp.Click(chromedp.CSS(`form[action="/verify-email"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("ws-title")))
		c.wantText(tab, "after confirming", "Email confirmed.")
		if strings.Contains(c.text(tab), "is not confirmed yet") {
			t.Fatalf("the console still says the address is not confirmed")
		}

		c.do(tab, "edit the profile", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("name")),
			clear("name"), chromedp.SendKeys(chromedp.ID("name"), "Renamed Person"),
			chromedp.Click(chromedp.CSS(`form[action="/account/profile"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "profile saved", "Profile saved.", "Confirmed")
		c.checkA11y(tab, "account")

		c.do(tab, "create a key", chromedp.Navigate(env.URL+"/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
			chromedp.SendKeys(chromedp.ID("key-name"), "chromium key"),
			chromedp.Click(chromedp.CSS(`form[action="/account/keys"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("new-secret")),
			// copy.js reveals the copy button: the CSP lets the served script run.
			chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-secret"]`)))
		secret, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("new-secret")))
		if !strings.HasPrefix(secret, "svc_u_") {
			t.Fatalf("secret shown = %q", secret)
		}
		c.checkA11y(tab, "keys with a new secret")
		c.do(tab, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("key-name")))
		if got := c.text(tab); strings.Contains(got, secret) || !strings.Contains(got, "chromium key") {
			t.Fatalf("after a reload the secret is shown again or the key is not listed:\n%s", got)
		}
		c.do(tab, "revoke the key", chromedp.Click(chromedp.CSS(`button[aria-label="Revoke chromium key"]`)),
			chromedp.WaitVisible(chromedp.CSS("button.danger")))
		c.wantText(tab, "confirmation", "Revoke the API key “chromium key”?")
		c.checkA11y(tab, "confirm the revocation")
		c.do(tab, "confirm", chromedp.Click(chromedp.CSS("button.danger")), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "revoked", "The API key “chromium key” was revoked: it no longer works.", "You have no personal API keys.")

		chromiumSessionsAndWorkspaces(t, c, tab, env, email, pw)
	})
}

// chromiumSessionsAndWorkspaces is the second half of TestChromiumConsole:
// a second device signed out from the sessions page, the workspace pages,
// and the sole-owner refusal of account deletion.
func chromiumSessionsAndWorkspaces(t *testing.T, c *chrome, tab context.Context, env *testenv.Env, email, pw string) {
	// A second device signs in; this browser signs it out.
	other := c.tab()
	c.do(other, "second device signs in", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
	c.do(tab, "sessions", chromedp.Navigate(env.URL+"/account/sessions"), chromedp.WaitVisible(chromedp.CSS(".list")))
	if n := strings.Count(c.text(tab), "This browser"); n != 1 {
		t.Fatalf("%d sessions marked as this browser; want 1", n)
	}
	c.checkA11y(tab, "sessions")
	c.do(tab, "sign out the other device", chromedp.Click(chromedp.CSS(`form[action="/account/sessions/revoke-others"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	c.do(other, "the other device is signed out", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"]`)))

	c.do(tab, "workspaces", chromedp.Navigate(env.URL+"/account/workspaces"), chromedp.WaitVisible(chromedp.ID("ws-name")))
	c.checkA11y(tab, "workspaces")
	c.do(tab, "apps", chromedp.Navigate(env.URL+"/account/apps"), chromedp.WaitVisible(chromedp.CSS(".list")))
	c.checkA11y(tab, "apps")

	// Sole owner of a workspace with another member: the 409 explained.
	me := env.Login(t, email, pw).Want(t, 200)
	team := env.TeamOrg(t, "Chromium Team", [2]string{me.Str("user.id"), "owner"}, [2]string{env.Register(t).UserID, "member"})
	c.do(tab, "members", chromedp.Navigate(env.URL+"/workspaces/"+team+"/members"), chromedp.WaitVisible(chromedp.ID("q")))
	c.wantText(tab, "members", "2 members", "Change role")
	c.checkA11y(tab, "members")
	c.do(tab, "invitation link", chromedp.Click(chromedp.CSS(`a[href$="/invitations"]`)), chromedp.WaitVisible(chromedp.ID("emails")),
		chromedp.Click(chromedp.CSS(`input[value=link] ~ button`)), chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-link"]`)))
	c.checkA11y(tab, "invitations")
	c.do(tab, "tools", chromedp.Navigate(env.URL+"/workspaces/"+team+"/tools"), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Turn off tasks"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Turn off tasks"]`)), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Turn on tasks"]`)))
	c.checkA11y(tab, "tools")
	c.do(tab, "delete the account", chromedp.Navigate(env.URL+"/account/delete"), chromedp.WaitVisible(chromedp.ID("confirm")),
		chromedp.SendKeys(chromedp.ID("confirm"), email),
		chromedp.Click(chromedp.CSS(`form[action="/account/delete"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".card.warn")))
	c.wantText(tab, "sole owner", "cannot be deleted yet", "Chromium Team")
	c.checkA11y(tab, "delete refused")
}

// clear empties the input with id, as selecting its text and deleting it would.
func clear(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](`document.getElementById("`+id+`").value = ""`)(ctx, t)
		return err
	})
}
