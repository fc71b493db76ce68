package pages_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// longWorkspace is a workspace name as long as a person may type, with a
// word longer than a phone is wide.
const longWorkspace = "The International Consortium of Laboratories for Interdisciplinary-Collaboration-Supercalifragilisticexpialidocious-Research"

// longDomain makes an email address longer than a phone is wide.
const longDomain = "averyveryverylongdepartmentnameforthelaboratoryofeverything.example"

// darkMode emulates prefers-color-scheme in tab (dark, or light again).
func darkMode(c *chrome, tab context.Context, dark bool) {
	c.t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		c.t.Fatalf("emulate %s mode: %v", scheme, err)
	}
}

// checkA11yBoth is checkA11yWide in light and in dark mode (390 and 1280
// px each), back in light mode at 390 px.
func checkA11yBoth(c *chrome, tab context.Context, page string) {
	c.t.Helper()
	checkA11yWide(c, tab, page+", light")
	darkMode(c, tab, true)
	checkA11yWide(c, tab, page+", dark")
	darkMode(c, tab, false)
}

// checkA11yLightDark runs axe-core on the page at the tab's width in light
// and in dark mode, leaving it light.
func checkA11yLightDark(c *chrome, tab context.Context, page string) {
	c.t.Helper()
	c.checkA11y(tab, page+", light")
	darkMode(c, tab, true)
	c.checkA11y(tab, page+", dark")
	darkMode(c, tab, false)
}

// noSidewaysScroll fails when the page in tab is wider than the viewport.
func noSidewaysScroll(c *chrome, tab context.Context, page string) {
	c.t.Helper()
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](
		`(() => { const s = document.scrollingElement; return s.scrollWidth + " " + s.clientWidth; })()`))
	if err != nil {
		c.t.Fatalf("%s: measure: %v", page, err)
	}
	var scroll, client int
	fmt.Sscan(got, &scroll, &client)
	if scroll > client || client == 0 {
		wide, _ := chromedp.Run(tab, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > document.scrollingElement.clientWidth + 1).slice(0, 5).map(e => e.tagName + "." + e.className).join(", ")`))
		c.t.Errorf("%s: the page scrolls sideways at %d px: %d px wide (%s)", page, client, scroll, wide)
	}
}

// TestChromiumSenseOfPlace is issue 30 item 5 in headless Chromium, on
// both databases: the header's workspace switcher (no script needed)
// lists the person's workspaces with the personal one marked and names
// the one the page is about; the personal workspace's pages open from it;
// opening a workspace leaves the default as it was; the personal and
// workspace keys have distinct names; at 320 px, with a long workspace
// name and a long address, no main page scrolls sideways and the
// navigation wraps; the pages are axe-clean at 390 and 1280 px in light
// and dark mode. With -update it writes the main ones to docs/screenshots.
func TestChromiumSenseOfPlace(t *testing.T) {
	c := newChrome(t, 320)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.RegisterAt(t, longDomain)
		team := env.TeamOrg(t, longWorkspace, [2]string{a.UserID, "owner"}, [2]string{env.Register(t).UserID, "member"})
		env.Do(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "a personal key"}).Want(t, 200)
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)

		// The switcher, closed, then open: every workspace, the personal
		// one marked, each a link.
		c.do(tab, "open the switcher", chromedp.Click(chromedp.CSS(".switcher summary")),
			chromedp.WaitVisible(chromedp.CSS(`.switcher a[href="/workspaces/`+team+`"]`)))
		header, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".switcher")))
		if err != nil || !strings.Contains(header, longWorkspace) || !strings.Contains(header, "personal") || !strings.Contains(header, "default") {
			t.Fatalf("the switcher shows %q (%v); want both workspaces, the personal one marked", header, err)
		}
		noSidewaysScroll(c, tab, "home with the switcher open")
		c.do(tab, "the personal workspace", chromedp.Click(chromedp.CSS(`.switcher a[href="/workspaces/`+a.OrgID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(".facts")))
		c.do(tab, "switcher names it", chromedp.WaitVisible(chromedp.CSS(".switcher summary strong")))
		c.do(tab, "the team workspace", chromedp.Click(chromedp.CSS(".switcher summary")),
			chromedp.Click(chromedp.CSS(`.switcher a[href="/workspaces/`+team+`"]`)), chromedp.WaitVisible(chromedp.CSS(".facts")))
		if here, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".switcher summary"))); !strings.Contains(here, longWorkspace) {
			t.Fatalf("on the team's overview the switcher says %q", here)
		}
		me := env.Do(t, "GET", "/v1/auth/me", env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token"), nil).Want(t, 200)
		if me.Get("org.id") != a.OrgID {
			t.Fatalf("after opening the team workspace, sign-in starts in %v; want the personal one still", me.Get("org.id"))
		}

		pages := []struct{ name, path, wait, says string }{
			{"home", "/", "#ws-title", longWorkspace},
			{"account", "/account", "#name", a.Email},
			{"personal keys", "/account/keys", "#key-name", "Personal API keys"},
			{"workspaces", "/account/workspaces", "#ws-name", longWorkspace},
			{"sessions", "/account/sessions", ".list", "This browser"},
			{"overview", "/workspaces/" + team, ".facts", longWorkspace},
			{"members", "/workspaces/" + team + "/members", "#q", a.Email},
			{"workspace keys", "/workspaces/" + team + "/keys", "#key-name", "workspace API keys"},
			{"personal overview", "/workspaces/" + a.OrgID, ".facts", "Members"},
		}
		for _, p := range pages {
			c.do(tab, p.name, chromedp.EmulateViewport(320, 900), chromedp.Navigate(env.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
			c.wantText(tab, p.name, p.says)
			noSidewaysScroll(c, tab, p.name+" at 320 px")
			darkMode(c, tab, true)
			noSidewaysScroll(c, tab, p.name+" at 320 px, dark")
			darkMode(c, tab, false)
			look(c, tab, "place-"+strings.ReplaceAll(p.name, " ", "-")+"-320")
		}
		for _, p := range pages {
			c.do(tab, p.name, chromedp.EmulateViewport(390, 900), chromedp.Navigate(env.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
			checkA11yBoth(c, tab, p.name)
		}
		// The console's navigation shows whole at any width (it wraps).
		for _, width := range []int64{320, 1280} {
			c.do(tab, "navigation", chromedp.EmulateViewport(width, 900), chromedp.Navigate(env.URL+"/"), chromedp.WaitVisible(chromedp.ID("ws-title")))
			if whole, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`(n => n.scrollWidth <= n.clientWidth)(document.querySelector(".console-nav"))`)); !whole {
				t.Errorf("the console's navigation is cut at %d px", width)
			}
		}
		c.do(tab, "390 px", chromedp.EmulateViewport(390, 900))
		c.do(tab, "switcher open", chromedp.Click(chromedp.CSS(".switcher summary")), chromedp.WaitVisible(chromedp.CSS(".switcher ul")))
		checkA11yBoth(c, tab, "switcher open")
		out := c.tab()
		c.do(out, "sign-in page", chromedp.EmulateViewport(390, 900), chromedp.Navigate(env.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("email")))
		checkA11yBoth(c, out, "sign-in page")
		// The navigation names personal and workspace keys apart.
		c.do(tab, "personal overview", chromedp.Navigate(env.URL+"/workspaces/"+a.OrgID), chromedp.WaitVisible(chromedp.CSS(".facts")))
		if n := c.count(tab, `.org-nav a[href$="/invitations"], .org-nav a[href$="/keys"]`); n != 0 {
			t.Fatalf("the personal workspace links %d team-only pages", n)
		}
		c.do(tab, "team overview", chromedp.Navigate(env.URL+"/workspaces/"+team), chromedp.WaitVisible(chromedp.CSS(".facts")))
		nav, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".org-nav")))
		console, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".console-nav")))
		if !strings.Contains(nav, "Workspace API keys") || !strings.Contains(console, "Personal API keys") {
			t.Fatalf("keys named %q in the workspace's navigation, %q in the console's", nav, console)
		}

		if testenv.Updating() && env.DB == testenv.Databases[0] {
			placeShots(c, tab, env, team)
		}
	})
}

// placeShots writes the screenshots of a sense of place and of dark mode.
func placeShots(c *chrome, tab context.Context, env *testenv.Env, team string) {
	c.do(tab, "switcher", chromedp.EmulateViewport(390, 800), chromedp.Navigate(env.URL+"/workspaces/"+team),
		chromedp.WaitVisible(chromedp.CSS(".facts")), chromedp.Click(chromedp.CSS(".switcher summary")), chromedp.WaitVisible(chromedp.CSS(".switcher ul")))
	c.screenshot(tab, "switcher-390", true)
	darkMode(c, tab, true)
	c.do(tab, "home dark", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(env.URL+"/"), chromedp.WaitVisible(chromedp.ID("ws-title")))
	c.screenshot(tab, "home-dark-1280", true)
	c.do(tab, "members dark", chromedp.EmulateViewport(390, 800), chromedp.Navigate(env.URL+"/workspaces/"+team+"/members"), chromedp.WaitVisible(chromedp.ID("q")))
	c.screenshot(tab, "members-dark-390", true)
	darkMode(c, tab, false)
}

// TestChromiumConfirmDialog is issue 30 item 3 with and without
// JavaScript, on both databases. With it, revoking a key opens a dialog
// that names the key (axe-clean in light and dark mode), Cancel changes
// nothing, and its button revokes the key with the notice naming it.
// Without it, leaving a workspace shows the confirmation as a page, whose
// button does it. (A post that skips the step: TestConfirmStep.)
func TestChromiumConfirmDialog(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		team := env.TeamOrg(t, "Dialog Works", [2]string{env.Register(t).UserID, "owner"}, [2]string{a.UserID, "member"})
		env.Do(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "nightly backup"}).Want(t, 200)
		keys := func() int {
			return len(env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200).List(t, "api_keys"))
		}

		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)
		revoke := chromedp.Click(chromedp.CSS(`form[action="/account/keys/revoke"] button`))
		c.do(tab, "revoke", chromedp.Navigate(env.URL+"/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
			revoke, chromedp.WaitVisible(chromedp.CSS(`dialog.confirm-dialog[open] button.danger`)))
		c.wantText(tab, "dialog", "Revoke the API key “nightly backup”?")
		if loc, _ := chromedp.Run(tab, chromedp.Location()); loc != env.URL+"/account/keys" {
			t.Fatalf("the dialog opened at %s; want the keys page itself", loc)
		}
		checkA11yBoth(c, tab, "confirmation dialog")
		look(c, tab, "confirm-dialog")
		c.do(tab, "cancel", chromedp.Click(chromedp.CSS(`dialog.confirm-dialog button.secondary`)),
			chromedp.WaitNotPresent(chromedp.CSS(`dialog.confirm-dialog`)))
		if n := keys(); n != 1 {
			t.Fatalf("%d keys after Cancel; want 1", n)
		}
		c.do(tab, "revoke again", revoke, chromedp.WaitVisible(chromedp.CSS(`dialog.confirm-dialog[open] button.danger`)),
			chromedp.Click(chromedp.CSS(`dialog.confirm-dialog button.danger`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "revoked", "The API key “nightly backup” was revoked")
		if n := keys(); n != 0 {
			t.Fatalf("%d keys after the dialog's button; want 0", n)
		}
		if testenv.Updating() && env.DB == testenv.Databases[0] {
			env.Do(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "nightly backup"}).Want(t, 200)
			c.do(tab, "dialog shot", chromedp.EmulateViewport(390, 760), chromedp.Navigate(env.URL+"/account/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
				revoke, chromedp.WaitVisible(chromedp.CSS(`dialog.confirm-dialog[open] button.danger`)))
			// The viewport only: the dialog and its backdrop.
			png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "screenshots", "confirm-dialog-390.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// Without JavaScript: the page.
		off := c.tab()
		if _, err := chromedp.Call(off, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("disable scripts: %v", err)
		}
		chromeSignIn(c, off, env.URL, a)
		c.do(off, "leave", chromedp.Navigate(env.URL+"/account/workspaces"), chromedp.WaitVisible(chromedp.ID("ws-name")),
			chromedp.Click(chromedp.CSS(`form[action="/account/workspaces/leave"] button`)), chromedp.WaitVisible(chromedp.CSS("button.danger")))
		if loc, _ := chromedp.Run(off, chromedp.Location()); loc != env.URL+"/account/workspaces/leave" {
			t.Fatalf("without scripts the step is at %s; want its page", loc)
		}
		c.wantText(off, "step page", "Leave Dialog Works?")
		c.do(off, "confirm", chromedp.Click(chromedp.CSS("button.danger")), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(off, "left", "You left Dialog Works.")
		if env.Role(t, team, a.UserID) != "" {
			t.Fatalf("still a member after confirming on the page")
		}
	})
}
