package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// verifiedTOTP is withTOTP on an account whose address is confirmed, so
// that a reset link's claim of the mailbox leaves its factor alone.
func verifiedTOTP(t *testing.T, env *testenv.Env) *mfaAccount {
	t.Helper()
	a := env.Register(t)
	env.VerifyEmail(t, a)
	e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
	m := &mfaAccount{Account: a, Secret: e.Str("secret")}
	c := env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", a.Access, map[string]string{"code": totpNow(t, env, m.Secret)}).Want(t, 200)
	m.Codes = testenv.Strings(c.Get("recovery_codes"))
	m.Access = c.Str("access_token")
	env.Clock.Advance(30 * time.Second)
	return m
}

// resetToken asks the API for a reset link for email and returns its token.
func resetToken(t *testing.T, env *testenv.Env, email string) string {
	t.Helper()
	const link = "http://web.test/reset-password?token="
	before := len(env.MailTexts(email, link))
	env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": email}).Want(t, 200)
	return env.WaitMailToken(t, email, link, before+1)
}

// TestResetPageAsksFactor: the reset link's page of an account with a
// second factor has the code fields (an account without one has none); a
// POST without a code, or with a wrong one, shows the form again with the
// reason and changes nothing (the link still works, the old password and
// session too); a recovery code sets the password, starts the browser
// session and is spent.
func TestResetPageAsksFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		plain := env.Register(t)
		env.VerifyEmail(t, plain)
		if res := env.NewBrowser(t).Get(t, "/reset-password?token="+url.QueryEscape(resetToken(t, env, plain.Email))); strings.Contains(res.Body, `name="code"`) {
			t.Fatalf("the page of an account without a factor asks for a code:\n%s", res.Body)
		}

		m := verifiedTOTP(t, env)
		tok := resetToken(t, env, m.Email)
		b := env.NewBrowser(t)
		wantPage(t, "landing", b.Get(t, "/reset-password?token="+url.QueryEscape(tok)), 200,
			"Two-factor authentication", `name="code"`, `name="recovery_code"`, `autocomplete="one-time-code"`, `value="`+tok+`"`)
		if res := b.Get(t, "/reset-password?token="+url.QueryEscape(tok)); strings.Contains(res.Body, "passkey") {
			t.Fatalf("the page of an account without a passkey offers one:\n%s", res.Body)
		}
		for _, path := range []string{"/reset-password/passkey/begin", "/reset-password/passkey"} {
			if res := b.PostCrossSite(t, path, url.Values{"token": {tok}}); res.Status != http.StatusForbidden {
				t.Fatalf("cross-site POST %s: %d; want 403", path, res.Status)
			}
		}
		const pw = "a page-reset passphrase"
		wantPage(t, "no code", b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw}}), http.StatusForbidden,
			"This account has two-factor authentication", `name="code"`, `value="`+tok+`"`, `id="code" name="code"`)
		wrong := "000000"
		if wrong == totpNow(t, env, m.Secret) {
			wrong = "111111"
		}
		wantPage(t, "wrong code", b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw}, "code": {wrong}}), http.StatusUnauthorized,
			"Invalid or already used code", `value="`+tok+`"`)
		wantPage(t, "wrong recovery code", b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw}, "recovery_code": {"aaaa-bbbb-cccc-dddd"}}),
			http.StatusUnauthorized, "Invalid or already used code", `id="recovery-code" name="recovery_code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" aria-invalid="true"`)
		env.Login(t, m.Email, m.Password).Want(t, 200)
		env.Call(t, "GET", "/v1/me/sessions", m.Access, nil).Want(t, 200)

		wantRedirect(t, "recovery code", b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw}, "recovery_code": {m.Codes[0]}}), "/")
		wantPage(t, "signed in after the reset", b.Get(t, "/account"), 200, m.Email)
		env.Login(t, m.Email, pw).Want(t, 200)
		env.Call(t, "GET", "/v1/me/sessions", m.Access, nil).Want(t, 401)
		// The code is spent: the step of a new sign-in refuses it.
		pending := env.Login(t, m.Email, pw).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", pending, map[string]string{"method": "recovery_code", "code": m.Codes[0]}).Want(t, 401)
		// A bad link is the error page, code or not.
		wantPage(t, "used link", env.NewBrowser(t).Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {pw + "!"}, "code": {totpNow(t, env, m.Secret)}}),
			http.StatusUnauthorized, "Invalid, expired or already used link")
	})
}

// TestPasswordPageRevokesKeysWhenAsked: the account page's password form
// keeps the personal API keys unless its box is ticked, and then revokes
// them (not the workspace keys the owner made) and says so.
func TestPasswordPageRevokesKeysWhenAsked(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		wantRedirect(t, "sign in", b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/")
		wantPage(t, "account page", b.Get(t, "/account"), 200, `name="revoke_api_keys"`, "Also revoke my personal API keys")
		if res := b.Get(t, "/account"); strings.Contains(res.Body, `name="revoke_api_keys" aria-describedby="revoke-keys-hint" checked`) {
			t.Fatalf("the box is ticked by default")
		}
		org := env.CreateOrg(t, a, "Page Keys "+testenv.RandomHex(3))
		key := env.CreateUserKey(t, a.Access, map[string]any{"name": "mine"}).Str("api_key.secret")
		orgKey := env.CreateOrgKey(t, a.Token, org, map[string]any{"name": "ci", "role": "member"}).Str("api_key.secret")
		const pw1, pw2 = "first page passphrase", "second page passphrase"
		wantRedirect(t, "change, keys kept", b.Post(t, "/account/password", url.Values{"current_password": {a.Password}, "new_password": {pw1}}), "/account?done=password")
		env.Exchange(t, key).Want(t, 200)
		wantRedirect(t, "change, keys revoked", b.Post(t, "/account/password", url.Values{"current_password": {pw1}, "new_password": {pw2}, "revoke_api_keys": {"on"}}),
			"/account?done=password-keys")
		wantPage(t, "notice", b.Get(t, "/account?done=password-keys"), 200, "personal API keys revoked")
		env.Exchange(t, key).Want(t, 401)
		env.Exchange(t, orgKey).Want(t, 200)
	})
}
