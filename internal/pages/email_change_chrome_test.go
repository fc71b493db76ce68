package pages_test

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumEmailChange is issue 30 item 1 as a person meets it, in
// headless Chromium on both databases, each page checked by axe-core at
// 390 and 1280 px in light and dark mode: the account page's form sends a
// link to the new address and says so, the account keeps its address;
// the mailed link shows a button (opening it changes nothing), which
// moves the account; the same link again says it was used, with no
// button; the account page
// then shows the new address; the old address's notice opens the undo
// page.
func TestChromiumEmailChange(t *testing.T) {
	c := newChrome(t, 390)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		c.t = t
		a := env.Register(t)
		next := testenv.Email()
		tab := c.tab()
		chromeSignIn(c, tab, env.URL, a)

		c.do(tab, "account", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.CSS(`form[action="/account/email"] #email`)),
			chromedp.SendKeys(chromedp.CSS(`form[action="/account/email"] #email`), next),
			chromedp.Click(chromedp.CSS(`form[action="/account/email"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
		c.wantText(tab, "asked", "A confirmation link is on its way to your new address.", a.Email)
		checkA11yBoth(c, tab, "account after asking")
		look(c, tab, "email-change-asked")
		if got := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200).Str("user.email"); got != a.Email {
			t.Fatalf("the address is %q before the link is opened", got)
		}

		link := env.URL + identity.ChangeEmailPath + "?token=" + url.QueryEscape(env.MailToken(t, next, changeLink))
		mailbox := c.tab() // the new address's mail, read anywhere
		c.do(mailbox, "the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("main button[type=submit]")))
		c.wantText(mailbox, "link page", "Confirm your new email address")
		checkA11yBoth(c, mailbox, "link page")
		if got := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200).Str("user.email"); got != a.Email {
			t.Fatalf("opening the link changed the address to %q", got)
		}
		c.do(mailbox, "use it", chromedp.Click(chromedp.CSS("main button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(`main a.button`)))
		c.wantText(mailbox, "changed", "Email address changed", next)
		checkA11yBoth(c, mailbox, "changed")
		look(c, mailbox, "email-change-done")

		c.do(mailbox, "the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("main h1")))
		c.wantText(mailbox, "used link", "This link was used already", "your account uses this email address")
		if n := c.count(mailbox, "main button[type=submit]"); n != 0 {
			t.Fatalf("the used link's page offers %d buttons", n)
		}
		checkA11yBoth(c, mailbox, "used link")
		look(c, mailbox, "email-change-used")

		c.do(tab, "account again", chromedp.Navigate(env.URL+"/account"), chromedp.WaitVisible(chromedp.ID("name")))
		c.wantText(tab, "account with the new address", next)

		undo := env.URL + identity.UndoEmailPath + "?token=" + url.QueryEscape(env.MailToken(t, a.Email, undoLink))
		c.do(mailbox, "the notice's link", chromedp.Navigate(undo), chromedp.WaitVisible(chromedp.CSS("main button[type=submit]")))
		c.wantText(mailbox, "undo page", "Report an email change you did not make")
		checkA11yBoth(c, mailbox, "undo page")
	})
}
