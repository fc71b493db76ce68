package pages_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// startChromium starts headless Chromium (Debian's build) with a
// DevTools virtual authenticator: CTAP2, internal (a platform
// authenticator), resident keys and user verification that succeeds, and
// presence simulated (without it navigator.credentials.create waits for
// a touch for ever). It skips the test when Chromium is missing, but under
// CI=true, where it fails.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(chromiumAllocator(t))
	t.Cleanup(cancel)
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	_, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return ctx
}

// TestChromiumPasskey is the passkey as a person meets it, in headless
// Chromium with a virtual authenticator: sign in with a password, add a
// passkey on the passkeys page (the served script's registration), sign
// out, sign in again by conditional UI and then by "Sign in with a
// passkey", no address typed, and remove the passkey. The passkeys page
// listing the passkey and the sign-in page offering the button are
// axe-clean at 390 and 1280 px in light and dark mode. The web URL (the
// relying party) is the server at localhost.
func TestChromiumPasskey(t *testing.T) {
	t.Parallel() // waits on Chromium or on mail jobs, not on the CPU
	testenv.RunWith(t, testenv.Options{LocalWeb: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		ctx, stepCtx, base, fail := passkeyBrowser(t, env)
		err := chromedp.Do(stepCtx,
			chromedp.Navigate(base+"/signin"),
			chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), a.Email),
			chromedp.SendKeys(chromedp.ID("password"), a.Password),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/account/passkeys"]`)),
			chromedp.Navigate(base+"/account/passkeys"),
			chromedp.WaitVisible(chromedp.ID("passkey-add")), // shown by the script
			chromedp.SendKeys(chromedp.ID("passkey-name"), "Chromium"),
			chromedp.Click(chromedp.ID("passkey-add")),
			chromedp.WaitVisible(chromedp.CSS(`li.passkey`)),
		)
		if err != nil {
			fail(err)
		}
		listed, err := chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS(`ul.passkeys`)))
		if err != nil {
			fail(err)
		}
		ax := axeIn(t, ctx)
		checkA11yPasskey(ax, ctx, "passkeys with one")
		stepCtx = passkeySteps(t, ctx)
		// Conditional UI: once signed out, the sign-in page asks for a
		// passkey with mediation "conditional" (offered in the email
		// field's autofill); the virtual authenticator answers it with its
		// one passkey, no click, no address typed.
		signedIn := `document.querySelector('form[action="/signout"]') !== null`
		err = chromedp.Do(stepCtx,
			chromedp.Navigate(base+"/signin"),
			chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)),
		)
		if err == nil {
			err = waitSessions(stepCtx, env, a.UserID, 1)
		}
		if err == nil {
			err = waitFor(stepCtx, signedIn)
		}
		if err != nil {
			fail(err)
		}
		// The button: in a browser without conditional UI (played by
		// overriding its check) the page offers "Sign in with a passkey".
		_, err = chromedp.Call(stepCtx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`})
		if err == nil {
			err = chromedp.Do(stepCtx,
				chromedp.Navigate(base+"/signin"),
				chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)),
				chromedp.WaitVisible(chromedp.ID("passkey-signin")),
			)
		}
		if err == nil {
			checkA11yPasskey(ax, ctx, "sign-in with the passkey button")
			stepCtx = passkeySteps(t, ctx)
			err = chromedp.Do(stepCtx, chromedp.Click(chromedp.ID("passkey-signin")))
		}
		if err == nil {
			err = waitSessions(stepCtx, env, a.UserID, 2)
		}
		if err == nil {
			err = waitFor(stepCtx, signedIn)
		}
		if err != nil {
			fail(err)
		}
		// Removal, by the page's form (no script needed).
		err = chromedp.Do(stepCtx,
			chromedp.Navigate(base+"/account/passkeys"),
			chromedp.Click(chromedp.CSS(`li.passkey form[action="/account/passkeys/remove"] button`)),
			// The confirmation page names the passkey.
			chromedp.Click(chromedp.CSS(`button.danger`)),
		)
		if err == nil {
			err = waitFor(stepCtx, `document.querySelector('li.passkey') === null && document.querySelector('main').textContent.includes('no passkey yet')`)
		}
		if err != nil {
			fail(err)
		}
		if !strings.Contains(listed, "Chromium") {
			t.Fatalf("passkeys page lists %q; want the passkey named Chromium", listed)
		}
		if pks, err := env.Store.ListPasskeys(context.Background(), a.UserID); err != nil || len(pks) != 0 {
			t.Fatalf("stored passkeys %+v (%v); want none after removal", pks, err)
		}
	})
}

// checkA11yPasskey runs axe-core on the page in the passkey browser's tab
// at 390 and 1280 px, light and dark (checkA11yBoth), and gives the tab
// its window's size back.
func checkA11yPasskey(c *chrome, tab context.Context, page string) {
	c.t.Helper()
	c.do(tab, "390 px", chromedp.EmulateViewport(390, 900))
	checkA11yBoth(c, tab, page)
	if _, err := chromedp.Call(tab, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
		c.t.Fatalf("%s: window size back: %v", page, err)
	}
}

// passkeyBrowser starts Chromium with its virtual authenticator for env's
// web at localhost (the relying party): the browser's context, one with
// the steps' 30 seconds, the base URL, and a failure that shows where the
// browser is.
func passkeyBrowser(t *testing.T, env *testenv.Env) (ctx, stepCtx context.Context, base string, fail func(error)) {
	ctx = startChromium(t)
	base = strings.Replace(env.URL, "127.0.0.1", "localhost", 1)
	stepCtx = passkeySteps(t, ctx)
	fail = func(err error) {
		t.Helper()
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("browser steps: %v (at %s showing %s)", err, loc, html)
	}
	return ctx, stepCtx, base, fail
}

// passkeySteps is ctx with the 30 seconds the passkey tests give their
// browser steps; a test takes a fresh one after checks that are not
// steps (axe-core's, which take their own time).
func passkeySteps(t *testing.T, ctx context.Context) context.Context {
	stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return stepCtx
}

// waitFor evaluates expr until it is true, across navigations (which end
// the page's JavaScript context under a running Poll), or ctx ends.
func waitFor(ctx context.Context, expr string) error {
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitSessions waits until the account has n sessions opened by a
// passkey: the browser's page may still show the page before.
func waitSessions(ctx context.Context, env *testenv.Env, userID string, n int) error {
	for {
		var got int
		err := env.SQL.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE user_id = $1 AND via = 'passkey'`, userID).Scan(&got)
		if err == nil && got >= n {
			if got > n {
				return fmt.Errorf("%d sessions via passkey; want %d", got, n)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d sessions via passkey, want %d: %w", got, n, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestChromiumPasskeyTwoInstances: two instances on one database behind a
// proxy that sends every ceremony's begin to the first and its finish to
// the second, as a load balancer may; the browser adds a passkey and
// signs in with the button (conditional UI turned off) through it.
func TestChromiumPasskeyTwoInstances(t *testing.T) {
	t.Parallel() // waits on Chromium or on mail jobs, not on the CPU
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			web := "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			one := testenv.New(t, db, testenv.Options{WebURL: web})
			two := testenv.New(t, db, testenv.Options{WebURL: web, DB: one.SQL})
			var finished atomic.Int32
			proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
				to := one.URL
				if p := r.In.URL.Path; strings.HasSuffix(p, "/finish") || p == "/signin/passkey" {
					to, _ = two.URL, finished.Add(1)
				}
				u, _ := url.Parse(to)
				r.SetURL(u)
				r.Out.Host = r.In.Host
			}}
			srv := &http.Server{Handler: proxy}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			a := one.Register(t)
			ctx := startChromium(t)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`}); err != nil {
				t.Fatal(err)
			}
			stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err = chromedp.Do(stepCtx,
				chromedp.Navigate(web+"/signin"),
				chromedp.WaitVisible(chromedp.ID("email")),
				chromedp.SendKeys(chromedp.ID("email"), a.Email),
				chromedp.SendKeys(chromedp.ID("password"), a.Password),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
				chromedp.WaitVisible(chromedp.CSS(`a[href="/account/passkeys"]`)),
				chromedp.Navigate(web+"/account/passkeys"),
				chromedp.WaitVisible(chromedp.ID("passkey-add")),
				chromedp.Click(chromedp.ID("passkey-add")),
				chromedp.WaitVisible(chromedp.CSS(`li.passkey`)),
				chromedp.Navigate(web+"/signin"),
				chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)),
				chromedp.WaitVisible(chromedp.ID("passkey-signin")),
				chromedp.Click(chromedp.ID("passkey-signin")),
			)
			if err == nil {
				err = waitSessions(stepCtx, one, a.UserID, 1)
			}
			if err != nil {
				loc, _ := chromedp.Run(ctx, chromedp.Location())
				t.Fatalf("browser steps: %v (at %s)", err, loc)
			}
			if n := finished.Load(); n != 2 {
				t.Fatalf("%d finishes went to the second instance; want 2 (registration and sign-in)", n)
			}
		})
	}
}
