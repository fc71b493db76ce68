package pages_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumInvitations is issue 30 item 4 as a person meets it, in
// headless Chromium on both databases, the invitations page and the
// invitation's landing page checked by axe-core at 390 and 1280 px in
// light and dark mode: an admin invites an address by email with the
// roles described beside the role select; the pending invitation is
// listed; "Send again" says where the new link went; inviting the same
// address again renews it (still one row); inviting a member is refused
// next to the field; the invitee opens the mailed link in a browser
// context of their own, creates an account from it, accepts and opens
// the workspace.
func TestChromiumInvitations(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		email := testenv.Email()
		path := env.URL + "/workspaces/" + org + "/invitations"
		rows := `li.row:has(button[aria-label="Send again to ` + email + `"])`
		send := chromedp.Click(chromedp.CSS(`form:has(#emails) button[type=submit]`))

		tab := c.tab()
		chromeSignIn(c, tab, env.URL, owner)
		c.do(tab, "invitations", chromedp.Navigate(path), chromedp.WaitVisible(chromedp.ID("emails")), chromedp.WaitVisible(chromedp.ID("roles-help")))
		help, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("roles-help")))
		if err != nil || !strings.Contains(help, "uses the workspace's tools") || !strings.Contains(help, "also invites and manages members") {
			t.Fatalf("the roles beside the select say %q (%v)", help, err)
		}
		c.do(tab, "invite", chromedp.SendKeys(chromedp.ID("emails"), email), chromedp.SetValue(chromedp.ID("role"), "member"), send,
			chromedp.WaitVisible(chromedp.CSS(".notice")), chromedp.WaitVisible(chromedp.CSS(rows)))
		c.wantText(tab, "invited", "Invitations sent.", email)
		checkA11yBoth(c, tab, "invitations with a pending one")
		look(c, tab, "invitations-pending")

		c.do(tab, "send again", chromedp.Click(chromedp.CSS(rows+` form[action$="/resend"] button`)))
		landedOn(c, tab, "?done=invitation-resent")
		c.wantText(tab, "resent", "A new invitation link went to "+email+"; the earlier one no longer works.")
		checkA11yBoth(c, tab, "invitations after sending again")

		c.do(tab, "invite again", chromedp.SendKeys(chromedp.ID("emails"), email), send)
		landedOn(c, tab, "?done=invited")
		c.wantText(tab, "renewed", "Invitations sent.")
		if n := c.count(tab, rows); n != 1 {
			t.Fatalf("%d pending rows for %s after inviting it again; want 1 (renewed)", n, email)
		}

		c.do(tab, "invite a member", chromedp.SendKeys(chromedp.ID("emails"), member.Email), send, chromedp.WaitVisible(chromedp.ID("emails-error")))
		refusal, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("emails-error")))
		if err != nil || !strings.Contains(refusal, "is already a member of this workspace.") {
			t.Fatalf("inviting a member says %q (%v)", refusal, err)
		}
		if n := c.count(tab, `#emails[aria-invalid=true][aria-describedby~=emails-error]`); n != 1 {
			t.Fatalf("the address field is not marked invalid and described by the refusal (%d)", n)
		}
		checkA11yBoth(c, tab, "invitations refusing a member")
		look(c, tab, "invitations-member-refused")

		// Three mails went (invited, sent again, renewed), by jobs in any
		// order: the link that still works is the one to open.
		env.WaitMailToken(t, email, testenv.InviteLink, 3)
		tok, live := "", 0
		for _, text := range env.MailTexts(email, testenv.InviteLink) {
			k := testenv.TokenFromLink(t, text, testenv.InviteLink)
			if env.Call(t, "GET", "/v1/invitations/"+k, "", nil).Status == 200 {
				tok, live = k, live+1
			}
		}
		if live != 1 {
			t.Fatalf("%d of the mailed links work; want only the last one", live)
		}

		in := c.tab()
		c.do(in, "open the mailed link", chromedp.Navigate(env.URL+"/invite?token="+tok), chromedp.WaitVisible(chromedp.CSS(`a[href^="/signup"]`)))
		c.wantText(in, "invitation", "invited you to join", "as member")
		checkA11yBoth(c, in, "invitation signed out")
		c.do(in, "create an account", chromedp.Click(chromedp.CSS(`a[href^="/signup"]`)), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("name"), "Ina Invitee"),
			chromedp.SendKeys(chromedp.ID("password"), "a chromium invitee passphrase"),
			chromedp.Click(chromedp.CSS(`form[action="/signup"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/invite"] button[type=submit]`)))
		c.wantText(in, "back on the invitation", "Signed in as "+email)
		checkA11yBoth(c, in, "invitation signed in")
		c.do(in, "accept", chromedp.Click(chromedp.CSS(`form[action="/invite"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		// The mailed link reached the invitee's mailbox: the new account's
		// address is confirmed by the accept, and the page says so.
		c.wantText(in, "joined", "You joined the workspace.", "Your email address is confirmed")
		c.do(in, "open the workspace", chromedp.Click(chromedp.CSS(`main a[href="/workspaces/`+org+`"]`)), chromedp.WaitVisible(chromedp.CSS(".org-nav")))
		if loc, err := chromedp.Run(in, chromedp.Location()); err != nil || loc != env.URL+"/workspaces/"+org {
			t.Fatalf("the workspace opened at %q (%v)", loc, err)
		}

		c.do(tab, "invitations after joining", chromedp.Navigate(path), chromedp.WaitVisible(chromedp.ID("emails")))
		if n := c.count(tab, rows); n != 0 {
			t.Fatalf("%s still pending after it was accepted (%d rows)", email, n)
		}
	})
}

// landedOn waits until the page in tab is one whose address ends with
// suffix (a redirect after a form, where the page before showed the same
// elements).
func landedOn(c *chrome, tab context.Context, suffix string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	if err := waitFor(ctx, `location.href.endsWith(`+strconv.Quote(suffix)+`) && document.readyState === "complete"`); err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		c.t.Fatalf("waiting for a page ending %s: %v (at %s)", suffix, err, loc)
	}
}
