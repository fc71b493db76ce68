package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// fits fails the test when the page at ctx is wider than the window: a
// page that scrolls sideways at 360 px is not usable on a small phone.
func (c *chrome) fits(ctx context.Context, page string) {
	c.t.Helper()
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
	if err != nil {
		c.t.Fatalf("%s: measure the page: %v", page, err)
	}
	if wide[0] > wide[1] {
		c.t.Errorf("%s: the page is %d px wide in a %d px window", page, wide[0], wide[1])
	}
}

// TestChromiumFlowPages: at 360 px, the smallest width issue 14 names,
// the pages the other browser tests do not visit (password recovery and
// reset, the magic link's confirmation and "check your email", the error
// page, passkeys, the workspace's settings, keys, invitations and teams,
// account deletion, and the device consent with its user code and outcome)
// pass axe-core and none scrolls sideways; the pages the other tests visit
// are checked for width here too.
func TestChromiumFlowPages(t *testing.T) {
	c := newChrome(t, 360)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		anon := c.tab()
		check := func(tab context.Context, name, path string, wait chromedp.Action[chromedp.Void]) {
			t.Helper()
			c.do(tab, name, chromedp.Navigate(env.URL+path), wait)
			c.checkA11y(tab, name)
			c.fits(tab, name)
		}
		main := chromedp.WaitVisible(chromedp.CSS("main h1"))
		check(anon, "signin", "/", chromedp.WaitVisible(chromedp.ID("email")))
		// The conditional passkey request, which Chromium refuses on an IP
		// address, is not the person's doing: the page reports no failure.
		c.do(anon, "passkey script ran", chromedp.WaitVisible(chromedp.ID("passkey-signin")), chromedp.Sleep(time.Second))
		if shown, _ := chromedp.Run(anon, chromedp.Evaluate[bool](`!document.getElementById("passkey-error").hidden`)); shown {
			t.Fatalf("the sign-in page reports a failed passkey request nobody made: %s", c.text(anon))
		}
		check(anon, "signup", "/signup", chromedp.WaitVisible(chromedp.ID("email")))
		check(anon, "recover", "/recover", chromedp.WaitVisible(chromedp.ID("email")))
		check(anon, "reset password", "/reset-password?token=not-a-token", main)
		check(anon, "magic link", "/auth/magic?token=not-a-token", main)
		check(anon, "verify email", "/verify-email?token=not-a-token", main)
		check(anon, "error", "/invite?token=not-a-token", main)
		a := env.Register(t)
		c.do(anon, "email me a link", chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("magic-email")),
			chromedp.SendKeys(chromedp.ID("magic-email"), a.Email),
			chromedp.Click(chromedp.CSS(`form[action="/signin/magic"] button[type=submit]`)), chromedp.WaitNotPresent(chromedp.ID("magic-email")))
		c.wantText(anon, "check your email", "Check your email")
		c.checkA11y(anon, "check your email")
		c.fits(anon, "check your email")

		org := env.TeamOrg(t, "Narrow Harbour Company With A Long Name", [2]string{a.UserID, "owner"})
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)
		c.fits(tab, "home")
		base := "/workspaces/" + org
		for _, p := range [][2]string{{"account", "/account"}, {"sessions", "/account/sessions"}, {"passkeys", "/account/passkeys"},
			{"two-factor", "/account/two-factor"},
			{"apps", "/account/apps"}, {"keys", "/account/keys"}, {"workspaces", "/account/workspaces"}, {"delete", "/account/delete"},
			{"overview", base}, {"members", base + "/members"}, {"invitations", base + "/invitations"}, {"teams", base + "/teams"},
			{"tools", base + "/tools"}, {"workspace keys", base + "/keys"}, {"provisioning", base + "/scim"}, {"domains", base + "/domains"}, {"audit", base + "/audit"},
			{"settings", base + "/settings"}} {
			check(tab, p[0], p[1], main)
		}

		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Narrow Device",
			"redirect_uris": []string{"http://127.0.0.1:9/cb"}, "grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code"}}).
			Want(t, http.StatusCreated).Str("client_id")
		da := deviceAuthorization(t, env, url.Values{"client_id": {client}})
		c.do(tab, "device consent", chromedp.Navigate(da.Complete), chromedp.WaitVisible(chromedp.CSS(".user-code")))
		c.checkA11y(tab, "device consent")
		c.fits(tab, "device consent")
		c.do(tab, "approve", chromedp.Click(chromedp.CSS(`label[for="org-0"]`)),
			chromedp.Click(chromedp.CSS(`button[value="approve"]`)), chromedp.WaitVisible(chromedp.CSS(`main a.button`)))
		c.wantText(tab, "device connected", "Device connected")
		c.checkA11y(tab, "device connected")
		c.fits(tab, "device connected")
	})
}
