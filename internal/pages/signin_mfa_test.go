package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// mfaAccount is an account with a confirmed TOTP factor, its secret and
// recovery codes.
type mfaAccount struct {
	*testenv.Account
	Secret string
	Codes  []string
}

// withTOTP registers an account and confirms a TOTP factor through the
// API; the clock then moves a step on, so the confirming code is spent.
func withTOTP(t *testing.T, env *testenv.Env) *mfaAccount {
	t.Helper()
	a := env.Register(t)
	e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
	m := &mfaAccount{Account: a, Secret: e.Str("secret")}
	c := env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", a.Access, map[string]string{"code": totpNow(t, env, m.Secret)}).Want(t, 200)
	m.Codes = testenv.Strings(c.Get("recovery_codes"))
	m.Access = c.Str("access_token") // the enrolling session, raised to aal2
	env.Clock.Advance(30 * time.Second)
	return m
}

// totpNow is secret's code at the env's clock.
func totpNow(t *testing.T, env *testenv.Env, secret string) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// cookieOf is the browser's cookie name for path, "" when it has none.
func cookieOf(t *testing.T, env *testenv.Env, b *testenv.Browser, path, name string) string {
	t.Helper()
	u, _ := url.Parse(env.URL + path)
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// toStep signs m in on /signin with next and checks the redirect to the
// step page, which keeps next.
func toStep(t *testing.T, env *testenv.Env, b *testenv.Browser, m *mfaAccount, next string) {
	t.Helper()
	res := b.Post(t, "/signin", url.Values{"email": {m.Email}, "password": {m.Password}, "next": {next}})
	wantRedirect(t, "password sign-in owing a factor", res, "/signin/mfa?"+url.Values{"next": {next}}.Encode())
	sc := strings.Join(res.Header.Values("Set-Cookie"), "\n")
	if !strings.Contains(sc, "gatehouse_mfa=") || !strings.Contains(sc, "Path=/signin") || !strings.Contains(sc, "HttpOnly") ||
		!strings.Contains(sc, "SameSite=Strict") || !strings.Contains(sc, "Max-Age=900") || strings.Contains(sc, "gatehouse_session=") {
		t.Fatalf("Set-Cookie = %s; want only the pending cookie", sc)
	}
}

// TestSignInStep: a password sign-in of an account with TOTP goes through
// the step page: a wrong code shows the page again with an error and opens
// no session; the right one starts an aal2 browser session and goes on to
// next; the code cannot be used again, and the used pending cookie sends
// the browser back to sign in.
func TestSignInStep(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		b := env.NewBrowser(t)
		next := "/account/sessions?x=1"
		toStep(t, env, b, m, next)
		// The pending cookie is no browser session.
		pending := cookieOf(t, env, b, "/signin/mfa", "gatehouse_mfa")
		wantPage(t, "GET / owing the step", b.Get(t, "/"), 200, `action="/signin"`)
		wantRedirect(t, "GET /account owing the step", b.Get(t, "/account"), "/signin?next=%2Faccount")
		u, _ := url.Parse(env.URL)
		forged := env.NewBrowser(t)
		forged.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_session", Value: pending, Path: "/"}})
		wantPage(t, "GET / with the pending token as the session", forged.Get(t, "/"), 200, `action="/signin"`)

		step := "/signin/mfa?" + url.Values{"next": {next}}.Encode()
		wantPage(t, "step page", b.Get(t, step), 200, `autocomplete="one-time-code"`, `inputmode="numeric"`,
			`name="method" value="recovery_code"`, `name="next" value="`+strings.ReplaceAll(next, "&", "&amp;")+`"`)
		wantPage(t, "step page with a foreign next", b.Get(t, "/signin/mfa?next=%2F%2Fevil.example"), 200, `name="next" value="/"`)
		if res := b.Get(t, step); strings.Contains(res.Body, "passkey-step") || strings.Contains(res.Body, "<script") {
			t.Fatalf("passkey option without a passkey:\n%s", res.Body)
		}
		// Cross-site: refused, the code unspent.
		code := totpNow(t, env, m.Secret)
		if res := b.PostCrossSite(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {next}}); res.Status != http.StatusForbidden {
			t.Fatalf("cross-site step: %d; want 403", res.Status)
		}
		wrong := "000000"
		if wrong == code {
			wrong = "111111"
		}
		res := b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {wrong}, "next": {next}})
		wantPage(t, "wrong code", res, http.StatusUnauthorized, `class="error"`, "Invalid or already used code", `autocomplete="one-time-code"`)
		if sc := res.Header.Values("Set-Cookie"); len(sc) > 0 {
			t.Fatalf("wrong code set cookies: %v", sc)
		}
		wantPage(t, "bad code", b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {"abc"}, "next": {next}}), http.StatusBadRequest, `class="error"`)

		res = b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {next}})
		wantRedirect(t, "right code", res, next)
		sc := strings.Join(res.Header.Values("Set-Cookie"), "\n")
		if !strings.Contains(sc, "gatehouse_session=") || !strings.Contains(sc, "gatehouse_mfa=;") {
			t.Fatalf("Set-Cookie = %s; want the session set and the pending cookie cleared", sc)
		}
		wantPage(t, "console after the step", b.Get(t, "/"), 200, "Welcome, Test User", `action="/signout"`)
		// The used pending sign-in (cookie set again by hand) and a replayed code.
		b.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_mfa", Value: pending, Path: "/signin"}})
		wantRedirect(t, "used pending cookie", b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {next}}),
			"/signin?"+url.Values{"done": {"step-expired"}, "next": {next}}.Encode())
		wantPage(t, "sign-in after expiry", b.Get(t, "/signin?done=step-expired"), 303)

		replay := env.NewBrowser(t)
		toStep(t, env, replay, m, "/")
		wantPage(t, "replayed code", replay.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {"/"}}), http.StatusUnauthorized, `class="error"`)

		// The browser session is at aal2.
		rt := cookieOf(t, env, b, "/", "gatehouse_session")
		c := testenv.Claims(t, env.Refresh(t, rt).Want(t, 200).Str("access_token"))
		if c["aal"] != "aal2" {
			t.Fatalf("browser session aal = %v; want aal2", c["aal"])
		}
	})
}

// TestSignInStepRecoveryCode: a recovery code takes the step once; the
// same code again is refused.
func TestSignInStepRecoveryCode(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		b := env.NewBrowser(t)
		// The browser was signed in as someone else: the step ends that
		// session, not the pending sign-in's start.
		other := env.Register(t)
		wantRedirect(t, "other sign-in", b.Post(t, "/signin", url.Values{"email": {other.Email}, "password": {other.Password}}), "/")
		before := cookieOf(t, env, b, "/", "gatehouse_session")
		toStep(t, env, b, m, "/account")
		wantPage(t, "the other account still signed in during the step", b.Get(t, "/account"), 200, other.Email)
		wantRedirect(t, "recovery code", b.Post(t, "/signin/mfa", url.Values{"method": {"recovery_code"}, "code": {m.Codes[0]}, "next": {"/account"}}), "/account")
		wantPage(t, "account after the step", b.Get(t, "/account"), 200, m.Email)
		env.Refresh(t, before).Want(t, 401)
		again := env.NewBrowser(t)
		toStep(t, env, again, m, "/")
		wantPage(t, "used recovery code", again.Post(t, "/signin/mfa", url.Values{"method": {"recovery_code"}, "code": {m.Codes[0]}, "next": {"/"}}),
			http.StatusUnauthorized, `class="error"`)
	})
}

// TestSignInStepExpired: without a pending cookie, or once its 15 minutes
// are over, the step page sends the browser back to sign in with a word
// of why, keeping next.
func TestSignInStepExpired(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		back := "/signin?" + url.Values{"done": {"step-expired"}, "next": {"/account"}}.Encode()
		wantRedirect(t, "no pending cookie", env.NewBrowser(t).Get(t, "/signin/mfa?next=%2Faccount"), back)
		b := env.NewBrowser(t)
		toStep(t, env, b, m, "/account")
		env.Clock.Advance(16 * time.Minute)
		wantRedirect(t, "expired pending cookie", b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, m.Secret)}, "next": {"/account"}}), back)
		wantPage(t, "sign-in page says why", env.NewBrowser(t).Get(t, back), 200, "expired before its second step")
	})
}

// TestSignInStepOtherWays: the magic-link sign-in of an account with TOTP
// also goes through the step; its password reset asks for the factor on
// the reset form itself.
func TestSignInStepOtherWays(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		env.VerifyEmail(t, m.Account)
		b := env.NewBrowser(t)
		next := "/account/apps"
		if res := b.Post(t, "/signin/magic", url.Values{"email": {m.Email}, "next": {next}}); res.Status != 200 {
			t.Fatalf("request link: %d", res.Status)
		}
		tok := env.WaitMailToken(t, m.Email, testenv.MagicLink, 1)
		wantRedirect(t, "magic link", b.Post(t, "/auth/magic", url.Values{"token": {tok}}), "/signin/mfa?"+url.Values{"next": {next}}.Encode())
		wantRedirect(t, "GET /account after the link", b.Get(t, "/account"), "/signin?next=%2Faccount")
		wantRedirect(t, "step after the link", b.Post(t, "/signin/mfa", url.Values{"code": {totpNow(t, env, m.Secret)}, "next": {next}}), next)
		wantPage(t, "console after the link's step", b.Get(t, next), 200)

		r := env.NewBrowser(t)
		if res := r.Post(t, "/recover", url.Values{"email": {m.Email}}); res.Status != 200 {
			t.Fatalf("recover: %d", res.Status)
		}
		rtok := env.MailToken(t, m.Email, "http://web.test/reset-password?token=")
		// The reset (the link claimed the address above, so its factor
		// stays) asks for the factor on its own form, not a step after.
		wantPage(t, "reset without the factor", r.Post(t, "/reset-password", url.Values{"token": {rtok}, "new_password": {"a brand new passphrase 42"}}),
			http.StatusForbidden, `name="recovery_code"`)
		wantRedirect(t, "reset with a recovery code", r.Post(t, "/reset-password", url.Values{"token": {rtok}, "new_password": {"a brand new passphrase 42"},
			"recovery_code": {m.Codes[1]}}), "/")
		wantPage(t, "console after the reset", r.Get(t, "/"), 200, `action="/signout"`)
	})
}

// TestSignInStepTooMany: past the account's second-factor attempts the
// page answers 429 with Retry-After and a readable message, and the right
// code is refused too until the window ends.
func TestSignInStepTooMany(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		b := env.NewBrowser(t)
		toStep(t, env, b, m, "/")
		for range 5 {
			b.Post(t, "/signin/mfa", url.Values{"method": {"recovery_code"}, "code": {"not-a-code"}, "next": {"/"}})
		}
		res := b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, m.Secret)}, "next": {"/"}})
		wantPage(t, "after five wrong codes", res, http.StatusTooManyRequests, "Too many attempts", `autocomplete="one-time-code"`)
		if ra := res.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("Retry-After = %q; want the rest of the window", ra)
		}
		wantPage(t, "still owing the step", b.Get(t, "/"), 200, `action="/signin"`)
	})
}

// TestSignInStepPasskeyGuards: the passkey option's endpoints answer only
// a same-site request of a browser with a pending sign-in: 403 cross-site,
// 401 without one; with one, begin reaches the account (which has no
// passkey here: the Chromium test takes the whole ceremony).
func TestSignInStepPasskeyGuards(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		anon := env.NewBrowser(t)
		for _, path := range []string{"/signin/mfa/passkey/begin", "/signin/mfa/passkey"} {
			if res := anon.Post(t, path, nil); res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, `"error"`) {
				t.Fatalf("POST %s without a pending sign-in: %d %s; want 401", path, res.Status, res.Body)
			}
		}
		b := env.NewBrowser(t)
		toStep(t, env, b, m, "/")
		if res := b.PostCrossSite(t, "/signin/mfa/passkey/begin", nil); res.Status != http.StatusForbidden {
			t.Fatalf("cross-site begin: %d; want 403", res.Status)
		}
		if res := b.Post(t, "/signin/mfa/passkey/begin", nil); res.Status != http.StatusBadRequest || !strings.Contains(res.Body, "no passkey") {
			t.Fatalf("begin: %d %s; want 400 naming no passkey", res.Status, res.Body)
		}
		wantPage(t, "still owing the step", b.Get(t, "/"), 200, `action="/signin"`)
	})
}
