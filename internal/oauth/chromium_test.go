package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// TestChromiumAuthorizationCode is the flow as a person sees it: headless
// Chromium (Debian's build, driven by chromedp) opens the authorization URL,
// signs in on the hosted page, picks a workspace on the consent page and
// allows; the browser lands on the client's loopback callback, and the code
// it carries is exchanged with golang.org/x/oauth2 for a token scoped to the
// chosen workspace. A real browser also checks what no HTTP client does:
// CSP form-action on the redirect after the consent form, SameSite cookies,
// CrossOriginProtection on same-origin posts.
func TestChromiumAuthorizationCode(t *testing.T) {
	_, err := os.Stat(chromiumPath)
	testenv.NeedTool(t, err == nil, chromiumPath+" (Debian's chromium)")
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Browser Team", [2]string{a.UserID, "admin"})

		got := make(chan url.Values, 1)
		cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case got <- r.URL.Query():
			default:
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<!doctype html><title>Signed in</title><p>You can close this window.</p>"))
		}))
		defer cb.Close()
		callback := cb.URL + "/callback"
		clientID := registerClient(t, env, map[string]any{"client_name": "Browser Test App", "redirect_uris": []string{callback}})
		cfg := &oauth2.Config{ClientID: clientID, RedirectURL: callback,
			Endpoint: oauth2.Endpoint{AuthURL: env.URL + "/oauth/authorize", TokenURL: env.URL + "/oauth/token"}}
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("chromium-state", oauth2.S256ChallengeOption(verifier))

		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.Headless,
			chromedp.Flag("disable-gpu", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.WindowSize(390, 844)) // a phone-sized window
		defer cancelAlloc()
		ctx, cancel := chromedp.NewContext(allocCtx)
		defer cancel()
		// The first Run starts the browser; it must not carry the timeout.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			t.Fatalf("start chromium: %v", err)
		}
		stepCtx, cancelSteps := context.WithTimeout(ctx, 30*time.Second)
		defer cancelSteps()
		err := chromedp.Do(stepCtx,
			chromedp.Navigate(authURL),
			chromedp.WaitVisible(chromedp.ID("email")),
			screenshot("signin.png"),
			chromedp.SendKeys(chromedp.ID("email"), a.Email),
			chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`input[name=org_id][value="`+team+`"]`)),
			screenshot("consent.png"),
			chromedp.Click(chromedp.CSS(`input[name=org_id][value="`+team+`"]`)),
			chromedp.Click(chromedp.CSS(`button[value=approve]`)),
		)
		if err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			t.Fatalf("browser steps: %v (at %s)", err, loc)
		}
		var q url.Values
		select {
		case q = <-got:
		case <-stepCtx.Done():
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
			t.Fatalf("the browser never reached the callback; it is at %s showing %s", loc, html)
		}
		if q.Get("state") != "chromium-state" || q.Get("iss") != env.URL {
			t.Fatalf("callback query = %v", q)
		}
		tok, err := cfg.Exchange(context.WithValue(context.Background(), oauth2.HTTPClient, env.Client), q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if org := testenv.Claims(t, tok.AccessToken)["org"].(map[string]any); org["id"] != team {
			t.Fatalf("token org = %v; want the chosen workspace %s", org, team)
		}
	})
}

// screenshot saves what the browser shows into $GATEHOUSE_SCREENSHOT_DIR,
// when set, for a person to look at the pages; otherwise it does nothing.
func screenshot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		dir := os.Getenv("GATEHOUSE_SCREENSHOT_DIR")
		if dir == "" {
			return nil
		}
		png, err := chromedp.CaptureScreenshot()(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), png, 0o644)
	})
}
