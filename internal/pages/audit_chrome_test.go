package pages_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumAuditAndActivity (issue 30 items 6 and 7): at 390 and 1280
// px, an owner filters the audit log by what happened and by days (a GET
// form), gets the CSV link of that view, and opens their security
// activity from the account page; axe-core finds no serious violation (in
// light and dark mode) and no page scrolls sideways. With -update it
// writes the screenshots.
func TestChromiumAuditAndActivity(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Harbour Labs", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		base := env.URL + "/workspaces/" + org
		env.Call(t, "POST", "/v1/orgs/"+org+"/teams", owner.Access, map[string]string{"name": "Night shift"}).Want(t, 200)
		env.Call(t, "POST", "/v1/orgs/"+org+"/api-keys", owner.Access, map[string]any{"name": "Billing sync", "role": "member"}).Want(t, 200)
		env.Call(t, "POST", "/v1/me/api-keys", owner.Access, map[string]any{"name": "laptop backup"}).Want(t, 200)
		for _, width := range []int{390, 1280} {
			c.width = width
			tab := c.tab()
			chromeSignIn(c, tab, env.URL, owner)
			shot := func(name string) {
				c.screenshot(tab, name+"-"+strconv.Itoa(width), testenv.Updating())
			}

			c.do(tab, "audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.ID("action")))
			c.wantText(tab, "audit", "Team created", "API key created", "by "+owner.Name, "team “Night shift”")
			checkA11yLightDark(c, tab, "audit")
			c.fits(tab, "audit")
			c.do(tab, "filter", chromedp.SetValue(chromedp.ID("action"), "identity.team.created"),
				chromedp.SetValue(chromedp.ID("from"), "2020-01-01"),
				chromedp.Click(chromedp.CSS(`form[action$="/audit"] button[type=submit]`)),
				chromedp.WaitVisible(chromedp.CSS(`a[href*="action=identity.team.created"]`)))
			titles, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".audit .item-title")].map(e => e.textContent)`))
			if err != nil || len(titles) == 0 || strings.Join(titles, ",") != strings.Repeat("Team created,", len(titles)-1)+"Team created" {
				t.Fatalf("filtered entries %q (%v); want team creations only", titles, err)
			}
			href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector("a[download]").getAttribute("href")`))
			if err != nil || !strings.HasPrefix(href, "/workspaces/"+org+"/audit.csv?") || !strings.Contains(href, "from=2020-01-01") {
				t.Fatalf("CSV link %q (%v); want the filtered view's", href, err)
			}
			checkA11yLightDark(c, tab, "filtered audit")
			c.fits(tab, "filtered audit")
			shot("audit-filtered")

			c.do(tab, "activity", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("name")),
				chromedp.Click(chromedp.CSS(`a[href="/account/activity"]`)), chromedp.WaitVisible(chromedp.CSS(".activity")))
			c.wantText(tab, "activity", "Security activity", "Signed in", "with password", "API key created", "“laptop backup”")
			if strings.Contains(c.text(tab), "Billing sync") {
				t.Fatalf("the activity page lists a workspace key")
			}
			checkA11yLightDark(c, tab, "activity")
			c.fits(tab, "activity")
			shot("activity")
		}
	})
}
