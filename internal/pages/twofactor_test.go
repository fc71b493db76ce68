package pages_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// twoFactor is the account's two-factor page.
const twoFactor = "/account/two-factor"

// enrolment is the TOTP enrolment a two-factor page shows.
type enrolment struct{ Secret, FactorID, URI string }

var (
	secretRE   = regexp.MustCompile(`<code id="totp-secret" hidden>([A-Z2-7]+)</code>`)
	factorIDRE = regexp.MustCompile(`name="factor_id" value="([^"]+)"`)
	uriRE      = regexp.MustCompile(`name="uri" value="([^"]+)"`)
	codeRE     = regexp.MustCompile(`<li><code>([a-z2-7-]{29})</code></li>`)
)

// enrolled reads the enrolment on a page.
func enrolled(t *testing.T, res *testenv.Page) enrolment {
	t.Helper()
	s, f, u := secretRE.FindStringSubmatch(res.Body), factorIDRE.FindStringSubmatch(res.Body), uriRE.FindStringSubmatch(res.Body)
	if s == nil || f == nil || u == nil {
		t.Fatalf("no enrolment on the page:\n%.4000s", res.Body)
	}
	return enrolment{Secret: s[1], FactorID: f[1], URI: html.UnescapeString(u[1])}
}

// recoveryCodes are the codes shown on a page.
func recoveryCodes(res *testenv.Page) []string {
	var out []string
	for _, m := range codeRE.FindAllStringSubmatch(res.Body, -1) {
		out = append(out, m[1])
	}
	return out
}

// pageTOTP sets up an authenticator app on b's two-factor page and returns
// its enrolment and the recovery codes shown.
func pageTOTP(t *testing.T, env *testenv.Env, b *testenv.Browser) (enrolment, []string) {
	t.Helper()
	e := enrolled(t, b.Post(t, twoFactor+"/totp", nil))
	form := url.Values{"factor_id": {e.FactorID}, "uri": {e.URI}, "code": {totpNow(t, env, e.Secret)}}
	wantRedirect(t, "first code", b.Post(t, twoFactor+"/confirm", form), twoFactor+"?done=totp-added")
	codes := recoveryCodes(b.Get(t, twoFactor))
	if len(codes) != 10 {
		t.Fatalf("codes shown: %v; want 10", codes)
	}
	return e, codes
}

// TestTwoFactorPage: /account/two-factor sets up an authenticator app
// without a script: the QR code (data: images allowed on that answer
// only), a setup cancelled, a wrong first code refused next to its field
// with the enrolment kept and nothing changed, the right one showing the
// recovery codes once (to this session only) and ending the other
// sessions while this browser stays signed in at aal2; cross-site posts
// change nothing.
func TestTwoFactorPage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		other := signedIn(t, env, a)
		b := signedIn(t, env, a)
		path := twoFactor
		res := b.Get(t, path)
		wantPage(t, "GET "+path, res, 200, "Two-factor sign-in is off.", `action="/account/two-factor/totp"`, `href="/account/passkeys"`, `aria-current="page">Two-factor`)
		for _, p := range []string{"/totp", "/confirm", "/remove", "/recovery-codes"} {
			wantPage(t, "cross-site "+p, b.PostCrossSite(t, path+p, url.Values{"code": {"123456"}}), http.StatusForbidden, "Request refused")
		}
		wantPage(t, "after cross-site posts", b.Get(t, path), 200, "Two-factor sign-in is off.")

		first := enrolled(t, b.Post(t, path+"/totp", nil))
		wantRedirect(t, "cancel a setup", b.Post(t, path+"/remove", url.Values{"id": {first.FactorID}}), path+"?done=setup-cancelled")
		wantPage(t, "after cancelling", b.Get(t, path+"?done=setup-cancelled"), 200, "Setup cancelled.", "Two-factor sign-in is off.")
		wantPage(t, "other session after cancelling", other.Get(t, "/account"), 200)

		res = b.Post(t, path+"/totp", nil)
		wantPage(t, "enrol", res, 200, `<img class="qr" src="data:image/png;base64,`, `autocomplete="one-time-code"`, "otpauth://totp/")
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data:;") {
			t.Fatalf("enrolment CSP = %q; want data: images allowed", csp)
		}
		e := enrolled(t, res)
		res = b.Get(t, path)
		wantPage(t, "pending", res, 200, "Not confirmed", "Cancel this setup")
		if csp := res.Header.Get("Content-Security-Policy"); strings.Contains(csp, "data:") {
			t.Fatalf("page CSP = %q; want no data: images without an enrolment", csp)
		}

		wrong := "000000"
		if wrong == totpNow(t, env, e.Secret) {
			wrong = "111111"
		}
		form := url.Values{"factor_id": {e.FactorID}, "uri": {e.URI}, "code": {wrong}}
		res = b.Post(t, path+"/confirm", form)
		wantPage(t, "wrong code", res, http.StatusBadRequest, `id="code-error">Invalid or already used code.`, `aria-invalid="true"`,
			`<img class="qr" src="data:`, `hidden>`+e.Secret+`</code>`, `name="factor_id" value="`+e.FactorID+`"`, "Not confirmed")
		if strings.Contains(res.Body, `value="`+wrong+`"`) {
			t.Fatalf("the wrong code is on the page")
		}
		foreign := url.Values{"factor_id": {e.FactorID}, "code": {wrong}, "uri": {"otpauth://totp/Evil:x?secret=JBSWY3DPEHPK3PXP&issuer=Evil"}}
		res = b.Post(t, path+"/confirm", foreign)
		wantPage(t, "wrong code, foreign URI", res, http.StatusBadRequest, `class="error" role="alert">Invalid or already used code.`)
		if strings.Contains(res.Body, "JBSWY3DP") || strings.Contains(res.Body, `<img class="qr"`) {
			t.Fatalf("an enrolment of another issuer is shown:\n%s", res.Body)
		}
		wantPage(t, "other session after a wrong code", other.Get(t, "/account"), 200)
		wantRedirect(t, "sign-in after a wrong code", env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/")

		form.Set("code", totpNow(t, env, e.Secret))
		wantRedirect(t, "right code", b.Post(t, path+"/confirm", form), path+"?done=totp-added")
		res = b.Get(t, path+"?done=totp-added")
		codes := recoveryCodes(res)
		wantPage(t, "codes once", res, 200, "Authenticator app added", "Save your recovery codes now", `data-copy="recovery-codes"`,
			`action="/account/two-factor/recovery-codes.txt"`, "10 unused recovery codes are left.", "Remove authenticator app")
		if len(codes) != 10 {
			t.Fatalf("codes shown: %v; want 10", codes)
		}
		res = b.Get(t, path)
		if got := recoveryCodes(res); len(got) != 0 || strings.Contains(res.Body, "Save your recovery codes") {
			t.Fatalf("codes shown again on reload: %v", got)
		}
		// This browser stays signed in; the other session ended; a new
		// sign-in owes the second step.
		wantPage(t, "this browser after confirming", b.Get(t, "/account"), 200, a.Email)
		rt := env.Refresh(t, cookieOf(t, env, b, "/", "gatehouse_session")).Want(t, 200)
		if c := testenv.Claims(t, rt.Str("access_token")); c["aal"] != "aal2" {
			t.Fatalf("this browser's session aal = %v; want aal2", c["aal"])
		}
		u, _ := url.Parse(env.URL)
		b.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_session", Value: rt.Str("refresh_token"), Path: "/"}})
		wantPage(t, "this browser after the refresh", b.Get(t, "/account"), 200, a.Email)
		wantRedirect(t, "other session after confirming", other.Get(t, "/account"), "/signin?next=%2Faccount")
		wantRedirect(t, "sign-in after confirming", env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}),
			"/signin/mfa?next=%2F")
	})
}

// TestTwoFactorPageChanges: codes forged into the cookie are not shown,
// the recovery codes download as text (only codes), new codes are shown once and void the old, a stale sign-in is
// asked to sign in again and changes nothing, and removing the factor
// turns two-factor off.
func TestTwoFactorPageChanges(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		path := twoFactor
		e, codes := pageTOTP(t, env, b)
		// Codes written into the cookie by hand, for another session and not
		// sealed (flash.go), are not shown.
		u, _ := url.Parse(env.URL + path)
		b.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_show_once", Value: "another-session." + strings.Join(codes, ":"), Path: path}})
		if got := recoveryCodes(b.Get(t, path)); len(got) != 0 {
			t.Fatalf("codes of another session shown: %v", got)
		}
		dl := b.Post(t, path+"/recovery-codes.txt", url.Values{"code": codes})
		if dl.Status != 200 || !strings.HasPrefix(dl.Header.Get("Content-Type"), "text/plain") ||
			!strings.Contains(dl.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(dl.Body, codes[9]+"\n") {
			t.Fatalf("download: %d %v\n%s", dl.Status, dl.Header, dl.Body)
		}
		wantPage(t, "download of other text", b.Post(t, path+"/recovery-codes.txt", url.Values{"code": {"<script>"}}), http.StatusBadRequest, "not recovery codes")

		wantRedirect(t, "new codes", b.Post(t, path+"/recovery-codes", nil), path+"?done=codes-new")
		res := b.Get(t, path+"?done=codes-new")
		fresh := recoveryCodes(res)
		wantPage(t, "new codes once", res, 200, "the old ones no longer work", "Save your recovery codes now")
		if len(fresh) != 10 || slices.Contains(fresh, codes[0]) {
			t.Fatalf("new codes %v; want 10 others than %v", fresh, codes)
		}
		if got := recoveryCodes(b.Get(t, path)); len(got) != 0 {
			t.Fatalf("new codes shown again: %v", got)
		}
		m := &mfaAccount{Account: a, Secret: e.Secret}
		step := env.NewBrowser(t)
		toStep(t, env, step, m, "/")
		wantPage(t, "old recovery code", step.Post(t, "/signin/mfa", url.Values{"method": {"recovery_code"}, "code": {codes[0]}, "next": {"/"}}),
			http.StatusUnauthorized, `class="error"`)
		wantRedirect(t, "new recovery code", step.Post(t, "/signin/mfa", url.Values{"method": {"recovery_code"}, "code": {fresh[0]}, "next": {"/"}}), "/")

		// Later, the sign-in is too old for changes.
		env.Clock.Advance(16 * time.Minute)
		for _, p := range []string{"/remove", "/recovery-codes", "/totp"} {
			res = b.Post(t, path+p, url.Values{"confirm": {"yes"}, "id": {e.FactorID}})
			wantPage(t, "stale "+p, res, http.StatusForbidden, "Sign in again to", `name="next" value="/account/two-factor"`, "<h1>Sign in again</h1>")
		}
		res = b.Post(t, path+"/remove", url.Values{"confirm": {"yes"}, "id": {e.FactorID}})
		wantPage(t, "stale remove", res, http.StatusForbidden, "Sign in again to remove a second factor")
		wantRedirect(t, "sign in again", b.Post(t, "/signout", url.Values{"next": {path}}), "/signin?next=%2Faccount%2Ftwo-factor")

		// Signed in again (with the second step), the factor goes.
		fresh2 := env.NewBrowser(t)
		toStep(t, env, fresh2, m, "/")
		wantRedirect(t, "step", fresh2.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, e.Secret)}, "next": {"/"}}), "/")
		// A post that skips the confirmation step turns nothing off.
		wantPage(t, "remove without the step", fresh2.Post(t, path+"/remove", url.Values{"id": {e.FactorID}}), 200,
			"Turn off the authenticator app?", `name="confirm" value="yes"`)
		wantRedirect(t, "still on", env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/signin/mfa?next=%2F")
		wantRedirect(t, "remove", fresh2.Post(t, path+"/remove", url.Values{"confirm": {"yes"}, "id": {e.FactorID}}), path+"?done=factor-removed")
		wantPage(t, "after removing", fresh2.Get(t, path+"?done=factor-removed"), 200, "Authenticator app removed: signing in no longer asks", "Two-factor sign-in is off.",
			"You get recovery codes when you set up an authenticator app.")
		wantRedirect(t, "sign-in after removing", env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/")
	})
}

// TestTwoFactorPageConfirmStale: an authenticator app set up just inside
// the recent sign-in window cannot be confirmed after it (issue 23 item
// 7): the page says to sign in again, as the other changes do, and the
// factor stays unconfirmed.
func TestTwoFactorPageConfirmStale(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		env.Clock.Advance(14 * time.Minute)
		e := enrolled(t, b.Post(t, twoFactor+"/totp", nil))
		env.Clock.Advance(2 * time.Minute)
		form := url.Values{"factor_id": {e.FactorID}, "uri": {e.URI}, "code": {totpNow(t, env, e.Secret)}}
		wantPage(t, "stale confirm", b.Post(t, twoFactor+"/confirm", form), http.StatusForbidden,
			"Sign in again to add a second factor", `name="next" value="/account/two-factor"`)
		wantRedirect(t, "sign-in after the refusal", env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/")
	})
}
