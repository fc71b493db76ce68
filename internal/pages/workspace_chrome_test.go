package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// chromeSignIn signs a in on tab through the sign-in form of the service
// at web.
func chromeSignIn(c *chrome, tab context.Context, web string, a *testenv.Account) {
	c.do(tab, "sign in", chromedp.Navigate(web+"/signin"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), a.Email), chromedp.SendKeys(chromedp.ID("password"), a.Password),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("ws-title")))
}

// chromiumOrgKey creates a workspace key named name on the keys page of
// the workspace at base and returns its secret, shown once with a copy
// button.
func chromiumOrgKey(c *chrome, tab context.Context, base, name string) string {
	c.t.Helper()
	c.do(tab, "workspace key", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
		chromedp.SendKeys(chromedp.ID("key-name"), name),
		chromedp.Click(chromedp.CSS(`form[action$="/keys"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-secret"]`)))
	c.checkA11y(tab, "workspace keys with a new secret")
	secret, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("new-secret")))
	if err != nil || !strings.HasPrefix(secret, "svc_o_") {
		c.t.Fatalf("secret shown = %q (%v); want a workspace key's", secret, err)
	}
	return secret
}

// chromiumDomain claims a domain on the domains page of the workspace at
// base, publishes the TXT record the page shows on the test DNS server,
// verifies it and returns the domain.
func chromiumDomain(c *chrome, tab context.Context, env *testenv.Env, base string) string {
	c.t.Helper()
	domain := "chromium-" + testenv.RandomHex(4) + ".test"
	c.do(tab, "claim a domain", chromedp.Navigate(base+"/domains"), chromedp.WaitVisible(chromedp.ID("domain")),
		chromedp.SendKeys(chromedp.ID("domain"), domain),
		chromedp.Click(chromedp.CSS(`form[action$="/domains"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="txt-value-0"]`)))
	c.checkA11y(tab, "domains")
	name, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("txt-name-0")))
	value, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("txt-value-0")))
	if name != "_service."+domain || value == "" {
		c.t.Fatalf("TXT record shown: %q = %q; want a value at _service.%s", name, value, domain)
	}
	env.DNS.SetTXT(name, value)
	c.do(tab, "verify", chromedp.Click(chromedp.CSS(`button[aria-label="Verify `+domain+`"]`)), chromedp.WaitVisible(chromedp.CSS(".badge.ok")))
	c.wantText(tab, "verified", "Domain verified.")
	c.checkA11y(tab, "domain verified")
	return domain
}

// TestChromiumWorkspacePages: an owner in headless Chromium opens the
// workspace overview, creates a team and adds a member by address, reads
// the audit log (filtered), is told a bad slug next to its field, creates
// a workspace key, claims and verifies a domain, and sees
// the consent and device pages; axe-core checks every page (zero serious
// or critical violations).
func TestChromiumWorkspacePages(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Chromium Works", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		base := env.URL + "/workspaces/" + org
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, owner)

		c.do(tab, "overview", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(".facts")))
		c.wantText(tab, "overview", "Chromium Works", "Audit log", "Settings")
		c.checkA11y(tab, "overview")
		c.do(tab, "create a team", chromedp.Click(chromedp.CSS(`.org-nav a[href$="/teams"]`)), chromedp.WaitVisible(chromedp.ID("name")),
			chromedp.SendKeys(chromedp.ID("name"), "Night shift"),
			chromedp.Click(chromedp.CSS(`form[action$="/teams"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("email")))
		c.wantText(tab, "team created", "Team created.", "Night shift")
		c.checkA11y(tab, "team")
		c.do(tab, "add a member", chromedp.SendKeys(chromedp.ID("email"), member.Email),
			chromedp.Click(chromedp.CSS(`form[action$="/members"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`button[aria-label^="Remove"]`)))
		c.wantText(tab, "member added", "Team member saved.", member.Email)
		c.do(tab, "teams", chromedp.Navigate(base+"/teams"), chromedp.WaitVisible(chromedp.CSS(".list")))
		c.checkA11y(tab, "teams")

		// The unfiltered page has entries with meta too: wait for the filter's
		// answer by its CSV link, which carries the filter, before reading it.
		c.do(tab, "audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.ID("action")),
			chromedp.SetValue(chromedp.ID("action"), "identity.team.member_set"),
			chromedp.Click(chromedp.CSS(`form[action$="/audit"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href*="action=identity.team.member_set"]`)), chromedp.WaitVisible(chromedp.CSS(".meta")))
		c.wantText(tab, "audit", "Team member added or role changed", "new role", "by "+owner.Name)
		c.checkA11y(tab, "audit")

		c.do(tab, "bad slug", chromedp.Navigate(base+"/settings"), chromedp.WaitVisible(chromedp.ID("slug")),
			clear("slug"), chromedp.SendKeys(chromedp.ID("slug"), "Bad Slug"),
			chromedp.Click(chromedp.CSS(`form[action$="/settings"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("slug-error")))
		c.checkA11y(tab, "settings with an error")
		chromiumOrgKey(c, tab, base, "ci deploy")
		chromiumDomain(c, tab, env, base)

		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Chromium App", "redirect_uris": []string{"http://127.0.0.1:9/cb"},
			"grant_types": []string{"authorization_code", "urn:ietf:params:oauth:grant-type:device_code"}}).Want(t, http.StatusCreated).Str("client_id")
		c.do(tab, "consent", chromedp.Navigate(env.URL+"/oauth/authorize?"+url.Values{"response_type": {"code"}, "client_id": {client},
			"redirect_uri": {"http://127.0.0.1:9/cb"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
			"code_challenge_method": {"S256"}, "state": {"s"}, "scope": {"openid tasks:read sign:write"}}.Encode()), chromedp.WaitVisible(chromedp.CSS(".tools-granted")))
		c.wantText(tab, "consent", "Not verified", "Tools:", "Read your tasks", "Create, send, void and change your documents for signature", "Only that")
		c.checkA11y(tab, "consent")
		r, err := env.Client.PostForm(env.URL+"/oauth/device/authorization", url.Values{"client_id": {client}})
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		c.do(tab, "device", chromedp.Navigate(env.URL+"/device"), chromedp.WaitVisible(chromedp.ID("user_code")))
		c.checkA11y(tab, "device code entry")
	})
}
