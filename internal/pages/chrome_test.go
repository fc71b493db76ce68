package pages_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// chrome is one headless Chromium (Debian's, driven by chromedp) whose
// tabs each have cookies of their own.
type chrome struct {
	t       *testing.T
	browser context.Context // the browser's first tab, which started it
	axe     string          // axe-core's source, injected into each checked page
	width   int             // each tab's viewport width
}

// newChrome starts Chromium whose tabs show pages width wide (height
// 900).
func newChrome(t *testing.T, width int) *chrome {
	t.Helper()
	axe := readAxe(t)
	alloc := chromiumAllocator(t, chromedp.Flag("force-prefers-reduced-motion", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(width, 900))
	// The first Run starts the browser; it must not carry a timeout.
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &chrome{t: t, browser: browser, axe: axe, width: width}
}

// readAxe is axe-core's source; it skips the test when the node modules
// are missing (fails under CI).
func readAxe(t *testing.T) string {
	t.Helper()
	axe, err := os.ReadFile(filepath.Join("..", "..", "test", "node", "node_modules", "axe-core", "axe.min.js"))
	testenv.NeedTool(t, err == nil, "test/node/node_modules/axe-core (npm ci)")
	return string(axe)
}

// axeIn is a chrome for checking pages in tab, a tab of a browser started
// otherwise (the passkey tests' one, with its virtual authenticator).
func axeIn(t *testing.T, tab context.Context) *chrome {
	t.Helper()
	return &chrome{t: t, browser: tab, axe: readAxe(t), width: 390}
}

// chromiumAllocator starts headless Debian Chromium with the flags every
// browser test shares, and extra; it skips the test when Chromium is
// missing (fails under CI).
func chromiumAllocator(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	_, err := os.Stat(chromiumPath)
	testenv.NeedTool(t, err == nil, chromiumPath+" (Debian's chromium)")
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("disable-gpu", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true)}, extra...)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	return alloc
}

// tab opens a tab of the one browser in a browser context of its own (its
// own cookies: a second person, or the same person on a second device),
// closed when the current test ends.
func (c *chrome) tab() context.Context {
	ctx, cancel := chromedp.NewContext(c.browser, chromedp.WithNewBrowserContext())
	c.t.Cleanup(cancel)
	// Headless Chromium's window is at least 500 px wide whatever its
	// size asks, so a phone's width is emulated in each tab.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.EmulateViewport(int64(c.width), 900)); err != nil {
		c.t.Fatalf("new browser context: %v", err)
	}
	return ctx
}

// do runs steps in ctx, failing the test with where the browser is.
func (c *chrome) do(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(stepCtx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		c.t.Fatalf("%s: %v (at %s)\n%.3000s", what, err, loc, body)
	}
}

// text is the text of the page's main element.
func (c *chrome) text(ctx context.Context) string {
	c.t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		c.t.Fatalf("read the page: %v", err)
	}
	return s
}

// wantText checks that the page's main element shows every text.
func (c *chrome) wantText(ctx context.Context, what string, texts ...string) {
	c.t.Helper()
	got := c.text(ctx)
	for _, s := range texts {
		if !strings.Contains(got, s) {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			c.t.Fatalf("%s: the page at %s does not show %q:\n%s", what, loc, s, got)
		}
	}
}

// axeViolation is one rule axe-core reports broken.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            []struct{ Target []any }
}

// checkA11y runs axe-core (WCAG 2.x A and AA rules and best practices)
// on the page and fails on any violation of impact serious or critical.
func (c *chrome) checkA11y(ctx context.Context, page string) {
	c.t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(stepCtx, chromedp.Evaluate[any](c.axe+";0")); err != nil {
		c.t.Fatalf("%s: inject axe-core: %v", page, err)
	}
	raw, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("%s: run axe-core: %v", page, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		c.t.Fatalf("%s: axe-core result: %v", page, err)
	}
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			c.t.Errorf("%s: axe-core %s violation %s: %s (at %v)", page, v.Impact, v.ID, v.Help, v.Nodes)
		}
	}
}

// screenshot writes the whole page as docs/screenshots/name.png under
// -update (the repository's copy); otherwise it does nothing.
func (c *chrome) screenshot(ctx context.Context, name string, update bool) {
	c.t.Helper()
	if !update {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "screenshots", name+".png"), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
}
