package pages_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChromiumShortLinkPage: a short link on the accounts origin (the
// default short-link URL) shows the page naming the destination's host
// (issue 24 item 3) in Chromium at phone and desktop width, axe-clean,
// its one link leading to the destination.
func TestChromiumShortLinkPage(t *testing.T) {
	c := newChrome(t, 1280)
	env := testenv.New(t, testenv.Databases[0], testenv.Options{ShortLinksOnAccounts: true})
	o := env.Register(t)
	link := env.Call(t, "POST", "/links/v1/links", o.Token, map[string]any{"destinationUrl": "https://docs.example.org/guide?from=gatehouse"}).Want(t, 200)
	tab := c.tab()
	for _, width := range []int64{390, 1280} {
		c.do(tab, "short link", chromedp.EmulateViewport(width, 800),
			chromedp.Navigate(env.URL+"/l/"+link.Str("link.shortCode")), chromedp.WaitVisible(chromedp.CSS("main a")))
		c.wantText(tab, "short link", "docs.example.org")
		c.checkA11y(tab, "short link")
		href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector("main a").href`))
		if err != nil || !strings.HasPrefix(href, "https://docs.example.org/guide") {
			t.Errorf("continue link = %q (%v); want the destination", href, err)
		}
		if width == 390 {
			c.screenshot(tab, "shortlink-390", testenv.Updating())
		}
	}
}
