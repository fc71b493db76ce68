package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// liveApps counts org's live applications.
func liveApps(t *testing.T, env *testenv.Env, org string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM applications WHERE org_id = $1 AND deleted_at IS NULL`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var appSecretRE = regexp.MustCompile(`id="new-secret" class="secret-value">(gha_[^<]+)<`)

// TestConsoleApplications: owners and admins register (the secret shown
// once), edit, rotate and delete applications; a member gets 403 for the
// pages and forged posts and is not offered the link; a refused field is
// explained next to it with the typed values kept; a cross-site post is
// refused.
func TestConsoleApplications(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, member := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Appworks", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/applications"
		ob, ab, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, member)
		form := url.Values{"client_name": {"Portal"}, "redirect_uris": {"https://portal.example.com/cb\nhttps://portal.example.com/cb2"},
			"token_endpoint_auth_method": {"client_secret_basic"}, "scope": {"openid email"}, "id_token_signed_response_alg": {"RS256"}}

		wantPage(t, "owner", ob.Get(t, path), 200, "This workspace has no applications.", `form method="post" action="`+path+`"`)
		if !strings.Contains(ob.Get(t, "/workspaces/"+org).Body, `href="`+path+`"`) {
			t.Fatalf("the overview does not link the applications page")
		}
		bad := url.Values{}
		for k, v := range form {
			bad[k] = v
		}
		bad.Set("redirect_uris", "http://portal.example.com/cb")
		wantPage(t, "bad redirect", ab.Post(t, path, bad), 400, `id="redirect_uris-error"`, `value="Portal"`)
		if n := liveApps(t, env, org); n != 0 {
			t.Fatalf("a refused form registered %d applications", n)
		}
		wantRedirect(t, "register", ab.Post(t, path, form), path+"?done=app-created")
		res := ab.Get(t, path)
		secret := appSecretRE.FindStringSubmatch(res.Body)
		if secret == nil {
			t.Fatalf("the new application's secret is not shown:\n%.3000s", res.Body)
		}
		if strings.Contains(ab.Get(t, path).Body, secret[1]) || strings.Contains(ob.Get(t, path).Body, secret[1]) {
			t.Fatalf("the secret is shown a second time")
		}
		app := regexp.MustCompile(`href="` + path + `/([0-9a-f-]{36})"`).FindStringSubmatch(res.Body)[1]
		one := path + "/" + app
		wantPage(t, "edit page", ob.Get(t, one), 200, "app_"+app, "portal.example.com/cb2")

		for name, b := range map[string]*testenv.Browser{"member": mb} {
			wantPage(t, name+" page", b.Get(t, path), 403)
			wantPage(t, name+" app page", b.Get(t, one), 403)
			wantPage(t, name+" registers", b.Post(t, path, form), 403)
			wantPage(t, name+" deletes", b.Post(t, one+"/delete", nil), 403)
			wantPage(t, name+" rotates", b.Post(t, one+"/secret", url.Values{"grace_seconds": {"0"}}), 403)
			if strings.Contains(b.Get(t, "/workspaces/"+org).Body, `href="`+path+`"`) {
				t.Fatalf("%s is offered the applications page", name)
			}
		}
		wantPage(t, "cross-site delete", ob.PostCrossSite(t, one+"/delete", nil), 403)

		edit := url.Values{}
		for k, v := range form {
			edit[k] = v
		}
		edit.Set("client_name", "Portal Two")
		edit.Set("first_party", "on")
		wantRedirect(t, "save", ob.Post(t, one+"/save", edit), one+"?done=app-saved")
		wantPage(t, "saved", ob.Get(t, one), 200, `value="Portal Two"`, `id="first_party" name="first_party" checked`)
		edit.Set("scope", "openid everything")
		wantPage(t, "bad scope", ob.Post(t, one+"/save", edit), 400, `id="scope-error"`, `value="openid everything"`)

		wantRedirect(t, "rotate", ob.Post(t, one+"/secret", url.Values{"grace_seconds": {"3600"}}), one+"?done=app-rotated")
		rotated := appSecretRE.FindStringSubmatch(ob.Get(t, one).Body)
		if rotated == nil || rotated[1] == secret[1] {
			t.Fatalf("the rotated secret is not shown")
		}
		wantPage(t, "grace shown", ob.Get(t, one), 200, "Previous secret")
		wantPage(t, "bad grace", ob.Post(t, one+"/secret", url.Values{"grace_seconds": {"9999999"}}), 400)

		wantRedirect(t, "delete", ob.Post(t, one+"/delete", nil), path+"?done=app-deleted")
		if n := liveApps(t, env, org); n != 0 {
			t.Fatalf("after deleting the workspace has %d applications", n)
		}
		wantPage(t, "deleted", ob.Get(t, one), 404)
		// A personal workspace has no applications page.
		wantPage(t, "personal", ob.Get(t, "/workspaces/"+owner.OrgID+"/applications"), 403)
	})
}

// TestChromiumApplications: an owner in headless Chromium registers an
// application, copies its secret (shown once), opens its settings and
// makes a new secret; axe-core checks each page.
func TestChromiumApplications(t *testing.T) {
	c := newChrome(t, 1280)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner := env.Register(t)
		org := env.TeamOrg(t, "Chromium Apps", [2]string{owner.UserID, "owner"})
		base := env.URL + "/workspaces/" + org
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, owner)
		c.do(tab, "applications", chromedp.Navigate(base+"/applications"), chromedp.WaitVisible(chromedp.ID("client_name")))
		c.checkA11y(tab, "applications")
		c.do(tab, "register", chromedp.SendKeys(chromedp.ID("client_name"), "Acme Portal"),
			chromedp.SendKeys(chromedp.ID("redirect_uris"), "https://portal.acme.example/callback"),
			chromedp.Click(chromedp.CSS(`form[action$="/applications"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-secret"]`)))
		c.wantText(tab, "registered", "Application registered.", "Acme Portal")
		c.checkA11y(tab, "applications with a new secret")
		c.screenshot(tab, "applications-1280", testenv.Updating())
		c.do(tab, "settings", chromedp.Click(chromedp.CSS(`.list a.item-title`)), chromedp.WaitVisible(chromedp.ID("grace_seconds")))
		c.checkA11y(tab, "application settings")
		c.do(tab, "rotate", chromedp.SetValue(chromedp.ID("grace_seconds"), "86400"),
			chromedp.Click(chromedp.CSS(`form[action$="/secret"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-secret"]`)))
		c.wantText(tab, "rotated", "New secret made.")
		c.checkA11y(tab, "application with a new secret")
		c.screenshot(tab, "applications-edit-1280", testenv.Updating())
	})
}
