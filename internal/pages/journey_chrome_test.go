package pages_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// journey is what TestChromiumJourney's steps share: the service, the
// browser, the people's browser contexts and what the pages gave them.
type journey struct {
	c   *chrome
	env *testenv.Env
	web string // the service at localhost, which is also its web URL: mailed links open as they are

	owner, member         *testenv.Account
	ownerTab, memberTab   context.Context
	memberTab2            context.Context // the member signed in a second time, elsewhere
	base                  string          // the workspace's pages
	inviteLink            string
	memberAccess, refresh string // memberTab2's session: an access token of it, and its cookie's refresh token
}

// step runs one named step of the journey as a subtest, and stops the
// journey when it fails: each step stands on the ones before.
func (j *journey) step(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, func(t *testing.T) {
		j.c.t = t
		fn(t)
	}) {
		t.FailNow()
	}
}

// TestChromiumJourney is issue 14's end-to-end journey through the hosted
// pages in headless Chromium, on both databases: a person signs up,
// confirms the address from the mail, creates a workspace and an
// invitation link; a second person opens the link and signs up from it;
// the owner changes their role, creates a team, turns a tool off, creates
// a workspace key (its secret shown once), claims and verifies a domain
// and finds each of those in the audit log; the second person, signed in
// twice, signs the other session out from the sessions page, and that
// browser is signed out and its access token refused. Only the pages are
// driven; the test reads the mail sink and publishes the TXT record.
// axe-core checks every page visited.
func TestChromiumJourney(t *testing.T) {
	c := newChrome(t, 1280)
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		c.t = t
		j := &journey{c: c, env: env, web: strings.Replace(env.URL, "127.0.0.1", "localhost", 1),
			owner:  &testenv.Account{Email: testenv.Email(), Password: "an owner's long passphrase", Name: "Olive Owner"},
			member: &testenv.Account{Email: testenv.Email(), Password: "a member's long passphrase", Name: "Milo Member"}}
		j.ownerTab, j.memberTab, j.memberTab2 = c.tab(), c.tab(), c.tab()
		j.step(t, "owner signs up", j.ownerSignsUp)
		j.step(t, "owner confirms the address from the mail", j.ownerConfirms)
		j.step(t, "owner creates a workspace", j.createWorkspace)
		j.step(t, "owner creates an invitation link", j.inviteByLink)
		j.step(t, "second person signs up from the invitation", j.memberJoins)
		j.step(t, "owner changes the member's role", j.changeRole)
		j.step(t, "owner creates a team", j.createTeam)
		j.step(t, "owner turns a tool off", j.toggleTool)
		j.step(t, "owner creates a workspace key", j.createKey)
		j.step(t, "owner claims and verifies a domain", j.verifyDomain)
		j.step(t, "owner reads the audit log", j.readAudit)
		j.step(t, "member signs in a second time", j.memberSignsInAgain)
		j.step(t, "member revokes the other session from their account page", j.revokeOtherSession)
	})
}

// ownerSignsUp fills /signup and lands on the console, told the address
// is not confirmed yet.
func (j *journey) ownerSignsUp(t *testing.T) {
	c, tab, o := j.c, j.ownerTab, j.owner
	c.do(tab, "open /signup", chromedp.Navigate(j.web+"/signup"), chromedp.WaitVisible(chromedp.ID("email")))
	c.checkA11y(tab, "signup")
	c.do(tab, "sign up", chromedp.SendKeys(chromedp.ID("email"), o.Email), chromedp.SendKeys(chromedp.ID("name"), o.Name),
		chromedp.SendKeys(chromedp.ID("password"), o.Password),
		chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
	c.wantText(tab, "console home", "Welcome, "+o.Name, "is not confirmed yet")
	c.checkA11y(tab, "home")
}

// ownerConfirms follows the confirmation link of the mail the sink got.
func (j *journey) ownerConfirms(t *testing.T) {
	c, tab := j.c, j.ownerTab
	prefix := j.web + "/verify-email?token="
	link := prefix + j.env.MailToken(t, j.owner.Email, prefix)
	c.do(tab, "open the mailed link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`form[action="/verify-email"]`)))
	c.checkA11y(tab, "verify email")
	c.do(tab, "confirm", chromedp.Click(chromedp.CSS(`form[action="/verify-email"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("ws-title")))
	c.wantText(tab, "after confirming", "Email confirmed.")
	if strings.Contains(c.text(tab), "is not confirmed yet") {
		t.Fatal("the console still says the address is not confirmed")
	}
}

// createWorkspace goes from the console to the workspaces page, creates
// one and opens it.
func (j *journey) createWorkspace(t *testing.T) {
	c, tab := j.c, j.ownerTab
	c.do(tab, "workspaces", chromedp.Click(chromedp.CSS(`a[href="/account/workspaces"]`)), chromedp.WaitVisible(chromedp.ID("ws-name")))
	c.do(tab, "create", chromedp.SendKeys(chromedp.ID("ws-name"), "Journey Works"),
		chromedp.Click(chromedp.CSS(`form[action="/account/workspaces"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[aria-label="Open Journey Works"]`)))
	c.checkA11y(tab, "workspaces")
	c.do(tab, "open it", chromedp.Click(chromedp.CSS(`a[aria-label="Open Journey Works"]`)), chromedp.WaitVisible(chromedp.CSS(".facts")))
	c.wantText(tab, "overview", "Journey Works")
	c.checkA11y(tab, "overview")
	loc, err := chromedp.Run(tab, chromedp.Location())
	if err != nil || !strings.HasPrefix(loc, j.web+"/workspaces/") {
		t.Fatalf("the workspace opened at %q (%v)", loc, err)
	}
	j.base = loc
}

// inviteByLink creates a link invitation and copies the link the page
// shows once.
func (j *journey) inviteByLink(t *testing.T) {
	c, tab := j.c, j.ownerTab
	c.do(tab, "invitations", chromedp.Click(chromedp.CSS(`.org-nav a[href$="/invitations"]`)), chromedp.WaitVisible(chromedp.ID("emails")),
		chromedp.Click(chromedp.CSS(`input[value=link] ~ button`)), chromedp.WaitVisible(chromedp.ID("new-link")))
	c.checkA11y(tab, "invitations with a new link")
	link, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("new-link")))
	if err != nil || !strings.HasPrefix(link, j.web+"/invite?token=") {
		t.Fatalf("invitation link shown = %q (%v)", link, err)
	}
	j.inviteLink = link
}

// memberJoins: the second person, in a browser context of their own,
// opens the link, creates an account from the invitation page and
// accepts.
func (j *journey) memberJoins(t *testing.T) {
	c, tab, m := j.c, j.memberTab, j.member
	c.do(tab, "open the invitation", chromedp.Navigate(j.inviteLink), chromedp.WaitVisible(chromedp.CSS(`a[href^="/signup"]`)))
	c.wantText(tab, "invitation", "invited you to join Journey Works as member")
	c.checkA11y(tab, "invitation")
	c.do(tab, "create an account", chromedp.Click(chromedp.CSS(`a[href^="/signup"]`)), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), m.Email), chromedp.SendKeys(chromedp.ID("name"), m.Name),
		chromedp.SendKeys(chromedp.ID("password"), m.Password),
		chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/invite"] button[type=submit]`)))
	c.wantText(tab, "back on the invitation", "Signed in as "+m.Email)
	c.checkA11y(tab, "invitation signed in")
	c.do(tab, "accept", chromedp.Click(chromedp.CSS(`form[action="/invite"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")))
	c.wantText(tab, "joined", "You joined the workspace.", "Journey Works")
	c.checkA11y(tab, "workspaces after joining")
}

// changeRole makes the member an admin on the members page.
func (j *journey) changeRole(t *testing.T) {
	c, tab := j.c, j.ownerTab
	form := `form:has(button[aria-label="Change role of ` + j.member.Name + `"])`
	c.do(tab, "members", chromedp.Navigate(j.base+"/members"), chromedp.WaitVisible(chromedp.CSS(form)))
	c.wantText(tab, "members", "2 members", j.member.Email)
	c.checkA11y(tab, "members")
	c.do(tab, "make admin", chromedp.SetValue(chromedp.CSS(form+" select"), "admin"),
		chromedp.Click(chromedp.CSS(form+" button")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	c.wantText(tab, "role changed", j.member.Email+" · admin")
}

// createTeam creates a team from the teams page.
func (j *journey) createTeam(t *testing.T) {
	c, tab := j.c, j.ownerTab
	c.do(tab, "create a team", chromedp.Click(chromedp.CSS(`.org-nav a[href$="/teams"]`)), chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "Night shift"),
		chromedp.Click(chromedp.CSS(`form[action$="/teams"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("email")))
	c.wantText(tab, "team created", "Team created.", "Night shift")
	c.checkA11y(tab, "team")
}

// toggleTool turns the tasks tool off on the tools page.
func (j *journey) toggleTool(t *testing.T) {
	c, tab := j.c, j.ownerTab
	c.do(tab, "tools", chromedp.Click(chromedp.CSS(`.org-nav a[href$="/tools"]`)), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Turn off tasks"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Turn off tasks"]`)), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Turn on tasks"]`)))
	c.checkA11y(tab, "tools")
}

// createKey creates a workspace key: its secret shown once, and not
// again after a reload.
func (j *journey) createKey(t *testing.T) {
	c, tab := j.c, j.ownerTab
	secret := chromiumOrgKey(c, tab, j.base, "journey deploy")
	c.do(tab, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("key-name")))
	if got := c.text(tab); strings.Contains(got, secret) || !strings.Contains(got, "journey deploy") {
		t.Fatalf("after a reload the secret is shown again or the key is not listed:\n%s", got)
	}
}

// verifyDomain claims a domain, publishes the TXT record the page shows
// on the test DNS server and verifies it.
func (j *journey) verifyDomain(t *testing.T) {
	chromiumDomain(j.c, j.ownerTab, j.env, j.base)
}

// readAudit finds each of the owner's actions on the audit page.
func (j *journey) readAudit(t *testing.T) {
	c, tab := j.c, j.ownerTab
	c.do(tab, "audit", chromedp.Click(chromedp.CSS(`.org-nav a[href$="/audit"]`)), chromedp.WaitVisible(chromedp.ID("action")))
	titles, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".audit .item-title")].map(e => e.textContent)`))
	if err != nil {
		t.Fatalf("audit entries: %v", err)
	}
	for _, label := range []string{"Member's role changed", "Team created", "Tool turned off", "API key created", "Domain verified"} {
		if !slices.Contains(titles, label) {
			t.Fatalf("audit: no entry %q among %q", label, titles)
		}
	}
	c.wantText(tab, "audit", "new role", "by "+j.owner.Name)
	c.checkA11y(tab, "audit")
}

// memberSignsInAgain signs the member in in a third browser context and
// mints an access token of that browser's session, as the service would
// for it, from the refresh token in its session cookie (read, not changed).
func (j *journey) memberSignsInAgain(t *testing.T) {
	tab := j.memberTab2
	chromeSignIn(j.c, tab, j.web, j.member)
	cookies, err := chromedp.Call(tab, network.GetCookies, network.GetCookiesParams{URLs: []string{j.web}})
	if err != nil || len(cookies.Cookies) != 1 {
		t.Fatalf("the browser's cookies: %v (%v); want the session cookie alone", cookies.Cookies, err)
	}
	j.refresh = cookies.Cookies[0].Value
	ctx := context.Background()
	b, err := j.env.Svc.BrowserUser(ctx, j.refresh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := j.env.Svc.BrowserPrincipal(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	ot, err := j.env.Svc.SwitchOrg(ctx, p, p.OrgID)
	if err != nil {
		t.Fatal(err)
	}
	j.memberAccess = ot.AccessToken
	j.env.Do(t, "GET", "/v1/auth/me", j.memberAccess, nil).Want(t, http.StatusOK)
}

// revokeOtherSession: from the sessions page of the first context the
// member signs out the other session; that browser's next page is the
// sign-in page and its tokens are refused.
func (j *journey) revokeOtherSession(t *testing.T) {
	c, tab := j.c, j.memberTab
	other := `li:not(:has(.badge.ok)) form[action="/account/sessions/revoke"]`
	c.do(tab, "sessions", chromedp.Navigate(j.web+"/account/sessions"), chromedp.WaitVisible(chromedp.CSS(other)))
	if n := c.count(tab, `form[action="/account/sessions/revoke"]`); n != 2 {
		t.Fatalf("%d sessions listed; want 2", n)
	}
	c.checkA11y(tab, "sessions")
	sid, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS(other+` input[name=id]`)))
	if err != nil || sid != testenv.SID(t, j.memberAccess) {
		t.Fatalf("the other session listed is %q (%v); want the second browser's, %s", sid, err, testenv.SID(t, j.memberAccess))
	}
	c.do(tab, "sign it out", chromedp.Click(chromedp.CSS(other+" button")), chromedp.WaitVisible(chromedp.CSS("button.danger")))
	c.do(tab, "confirm", chromedp.Click(chromedp.CSS("button.danger")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	if n := c.count(tab, `form[action="/account/sessions/revoke"]`); n != 1 {
		t.Fatalf("%d sessions listed after signing the other out; want 1", n)
	}
	c.do(j.memberTab2, "the revoked browser is signed out", chromedp.Navigate(j.web+"/account"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"]`)))
	if loc, _ := chromedp.Run(j.memberTab2, chromedp.Location()); !strings.HasPrefix(loc, j.web+"/signin") {
		t.Fatalf("the revoked browser is at %s; want the sign-in page", loc)
	}
	c.checkA11y(j.memberTab2, "signin")
	j.env.Do(t, "GET", "/v1/auth/me", j.memberAccess, nil).Want(t, http.StatusUnauthorized)
	j.env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": j.refresh}).Want(t, http.StatusUnauthorized)
	c.do(tab, "this browser is still signed in", chromedp.Navigate(j.web+"/account"), chromedp.WaitVisible(chromedp.ID("name")))
}

// count is the number of elements on tab's page that match the CSS selector.
func (c *chrome) count(tab context.Context, css string) int {
	c.t.Helper()
	n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(css)+`).length`))
	if err != nil {
		c.t.Fatalf("count %s: %v", css, err)
	}
	return n
}
