package identity_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// verifiedTOTP registers an account, confirms its address (so that a
// reset link's claim leaves its factor alone) and sets up its TOTP factor;
// the clock moves a step on, so the confirming code is not the next one.
func verifiedTOTP(t testing.TB, env *testenv.Env) *mfaAccount {
	t.Helper()
	a := env.Register(t)
	env.VerifyEmail(t, a)
	return enrolTOTP(t, env, a)
}

// resetWith is the body of POST /v1/auth/recover/verify with a factor.
func resetWith(tok, pw, method, code string) map[string]string {
	return map[string]string{"token": tok, "new_password": pw, "method": method, "code": code}
}

// TestRecoverAsksSecondFactor: a reset link of an account with a TOTP
// factor does not set the password alone: without a factor it is 403,
// with a wrong code 401, and neither changes anything (the password,
// sessions and personal keys still work, and the link stays usable);
// with the right code the password is set, every session and personal
// key ends, and the new session is a full one (aal2: the link and the
// factor). The attack: someone who holds the mailbox (a leaked mail
// account) takes over an account protected by two-factor authentication.
func TestRecoverAsksSecondFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := verifiedTOTP(t, env)
		key := env.CreateUserKey(t, m.Access, map[string]any{"name": "personal"}).Str("api_key.secret")
		tok := requestReset(t, env, m.Email)
		const path = "/v1/auth/recover/verify"
		newPW := "a fresh passphrase " + testenv.RandomHex(3)
		wrong := wrongCode(t, env, m.Secret)
		env.RunCases(t, []testenv.Case{
			{Name: "no factor", Method: "POST", Path: path, Body: resetBody(tok, newPW), Want: 403,
				Check: testenv.ErrorNames("two-factor authentication", "authenticator app", "recovery code")},
			{Name: "wrong TOTP code", Method: "POST", Path: path, Body: resetWith(tok, newPW, "totp", wrong), Want: 401},
			{Name: "malformed TOTP code", Method: "POST", Path: path, Body: resetWith(tok, newPW, "totp", "12ab"), Want: 400},
			{Name: "wrong recovery code", Method: "POST", Path: path, Body: resetWith(tok, newPW, "recovery_code", "aaaa-bbbb-cccc-dddd"), Want: 401},
			{Name: "unknown method", Method: "POST", Path: path, Body: resetWith(tok, newPW, "sms", "123456"), Want: 400},
			{Name: "bad link with the right code", Method: "POST", Path: path, Body: resetWith("not-a-token", newPW, "totp", totpAt(t, env, m.Secret, 0)), Want: 401},
		})
		// Nothing changed.
		env.Login(t, m.Email, m.Password).Want(t, 200)
		env.Login(t, m.Email, newPW).Want(t, 401)
		env.Call(t, "GET", "/v1/me/sessions", m.Access, nil).Want(t, 200)
		env.Exchange(t, key).Want(t, 200)

		r := env.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		access := r.Str("access_token")
		// A full session: the pending one could not list sessions.
		env.Call(t, "GET", "/v1/me/sessions", access, nil).Want(t, 200)
		if c := testenv.Claims(t, access); c["aal"] != "aal2" || !slices.Contains(testenv.Strings(c["amr"]), "otp") || !slices.Contains(testenv.Strings(c["amr"]), "mfa") {
			t.Errorf("claims aal %v amr %v; want aal2 with otp and mfa", c["aal"], c["amr"])
		}
		env.Call(t, "GET", "/v1/me/sessions", m.Access, nil).Want(t, 401)
		env.Refresh(t, m.Refresh).Want(t, 401)
		env.Login(t, m.Email, m.Password).Want(t, 401)
		env.Login(t, m.Email, newPW).Want(t, 200)
		env.Exchange(t, key).Want(t, 401)
		// Single use, the right code or not.
		env.Call(t, "POST", path, "", resetWith(tok, newPW+"x", "totp", totpAt(t, env, m.Secret, 1))).Want(t, 401)
	})
}

// TestRecoverFactorLockout: the reset form's codes count against the
// account's second-factor attempts, with the sign-in step's: after five
// wrong codes the right one is 429 there and at the sign-in step, the
// link is still unspent, and once the window ends the right code works.
// The attack: guessing TOTP codes through the reset form, which a link
// holder could otherwise repeat without limit.
func TestRecoverFactorLockout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := verifiedTOTP(t, env)
		tok := requestReset(t, env, m.Email)
		const path = "/v1/auth/recover/verify"
		newPW := "a locked-out passphrase " + testenv.RandomHex(3)
		wrong := wrongCode(t, env, m.Secret)
		for range 5 {
			env.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", wrong)).Want(t, 401)
		}
		r := env.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 429)
		testenv.WantRetryAfter(t, r)
		env.Call(t, "POST", path, "", resetWith(tok, newPW, "recovery_code", m.Codes[0])).Want(t, 429)
		pending := pendingLogin(t, env, m).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 429)
		env.Login(t, m.Email, newPW).Want(t, 401)

		env.Clock.Advance(15 * time.Minute)
		env.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		env.Login(t, m.Email, newPW).Want(t, 200)
	})
}

// TestRecoverWithRecoveryCode: a recovery code is a factor the reset
// takes, and spends: it works neither at a second reset nor at the
// sign-in step, and the account has one code fewer.
func TestRecoverWithRecoveryCode(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := verifiedTOTP(t, env)
		const path = "/v1/auth/recover/verify"
		newPW := "a recovered passphrase " + testenv.RandomHex(3)
		code := strings.ToUpper(m.Codes[3])
		r := env.Call(t, "POST", path, "", resetWith(requestReset(t, env, m.Email), newPW, "recovery_code", code)).Want(t, 200)
		if left := r.Get("user"); left == nil {
			t.Fatalf("reset answered %s; want a session", r.Body)
		}
		f := env.Call(t, "GET", "/v1/me/factors", r.Str("access_token"), nil).Want(t, 200)
		if n := f.Get("recovery_codes_left"); n != float64(9) {
			t.Fatalf("recovery_codes_left = %v after a reset with one; want 9", n)
		}
		env.Call(t, "POST", path, "", resetWith(requestReset(t, env, m.Email), newPW+"2", "recovery_code", m.Codes[3])).Want(t, 401)
		pending := env.Login(t, m.Email, newPW).Want(t, 200).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("recovery_code", m.Codes[3])).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("recovery_code", m.Codes[4])).Want(t, 200)
	})
}

// TestRecoverWithoutFactor: an account without a second factor resets
// with the link alone, as before, a factor in the body or not; one whose
// address was never verified too, whatever a registrant set up (the
// link's claim is what decides about it).
func TestRecoverWithoutFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.VerifyEmail(t, a)
		const path = "/v1/auth/recover/verify"
		pw := "no factor passphrase " + testenv.RandomHex(3)
		r := env.Call(t, "POST", path, "", resetBody(requestReset(t, env, a.Email), pw)).Want(t, 200)
		env.Call(t, "GET", "/v1/me/sessions", r.Str("access_token"), nil).Want(t, 200)
		env.Call(t, "POST", path, "", resetWith(requestReset(t, env, a.Email), pw+"2", "totp", "123456")).Want(t, 200)
		env.Login(t, a.Email, pw+"2").Want(t, 200)
	})
}

// TestRecoverFactorAcrossInstances: the link asked for on one instance,
// refused without the factor on a second and counted there, is taken
// with the factor on a third; the old session ends on all of them.
func TestRecoverFactorAcrossInstances(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := verifiedTOTP(t, env)
		two, three := env.Another(t), env.Another(t)
		tok := requestReset(t, env, m.Email)
		const path = "/v1/auth/recover/verify"
		newPW := "an instance passphrase " + testenv.RandomHex(3)
		two.Call(t, "POST", path, "", resetBody(tok, newPW)).Want(t, 403)
		for range 5 {
			two.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", wrongCode(t, env, m.Secret))).Want(t, 401)
		}
		three.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 429)
		env.Clock.Advance(15 * time.Minute)
		three.Call(t, "POST", path, "", resetWith(tok, newPW, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		for i, e := range []*testenv.Env{env, two, three} {
			wantRefused(t, e, i, "/v1/auth/me", m.Access)
		}
	})
}

// TestRecoverRevokesPersonalKeys: a reset revokes the account's personal
// API keys (someone who had the password may have made one), not the
// workspace keys it created, which belong to the workspace. The owner's
// password change keeps them unless asked (revoke_api_keys). The attack:
// a personal key made with a stolen password outlives the reset that
// took the account back.
func TestRecoverRevokesPersonalKeys(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.VerifyEmail(t, a)
		org := env.CreateOrg(t, a, "Keys Kept "+testenv.RandomHex(3))
		personal := env.CreateUserKey(t, a.Access, map[string]any{"name": "personal"}).Str("api_key.secret")
		scoped := env.CreateUserKey(t, a.Access, map[string]any{"name": "personal in team", "org_id": org}).Str("api_key.secret")
		orgKey := env.CreateOrgKey(t, a.Token, org, map[string]any{"name": "ci", "role": "member"}).Str("api_key.secret")
		pw := "a reset passphrase " + testenv.RandomHex(3)
		r := env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(requestReset(t, env, a.Email), pw)).Want(t, 200)
		env.Exchange(t, personal).Want(t, 401)
		env.Exchange(t, scoped).Want(t, 401)
		env.Exchange(t, orgKey).Want(t, 200)

		// The owner's change keeps the keys by default...
		access := r.Str("access_token")
		kept := env.CreateUserKey(t, access, map[string]any{"name": "kept"}).Str("api_key.secret")
		const change = "/v1/me/password"
		env.Call(t, "POST", change, access, map[string]any{"current_password": pw, "new_password": pw + " two"}).Want(t, 200)
		env.Exchange(t, kept).Want(t, 200)
		// ...and revokes them when asked, still not the workspace's.
		c := env.Call(t, "POST", change, access, map[string]any{"current_password": pw + " two", "new_password": pw + " three", "revoke_api_keys": true}).Want(t, 200)
		if !strings.Contains(c.Str("message"), "API keys revoked") {
			t.Errorf("message %q; want it to say the keys were revoked", c.Str("message"))
		}
		env.Exchange(t, kept).Want(t, 401)
		env.Exchange(t, orgKey).Want(t, 200)
		env.Call(t, "POST", change, access, map[string]any{"current_password": pw + " three", "new_password": pw + " four", "revoke_api_keys": "yes"}).Want(t, 400)
	})
}

// TestRecoverWithPasskey: an account with a TOTP factor and a passkey may
// give the passkey as the reset's factor (POST /v1/auth/recover/passkey
// for the options, then the assertion with the new password); the
// ceremony is used once, and an account without a passkey gets no
// options. A bad link gets none either.
func TestRecoverWithPasskey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := verifiedTOTP(t, env)
		auth := passkeytest.New(webOrigin, webRPID)
		m.Account.Access = m.Access
		c, _ := addPasskey(t, env, m.Account, auth)
		tok := requestReset(t, env, m.Email)
		env.Call(t, "POST", "/v1/auth/recover/passkey", "", map[string]string{"token": "not-a-token"}).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/recover/passkey", "", map[string]string{}).Want(t, 400)
		r := env.Call(t, "POST", "/v1/auth/recover/passkey", "", map[string]string{"token": tok}).Want(t, 200)
		var o passkeytest.Options
		if err := json.Unmarshal(r.Body, &o); err != nil || o.CeremonyID == "" {
			t.Fatalf("begin answered %s (%v)", r.Body, err)
		}
		newPW := "a passkey passphrase " + testenv.RandomHex(3)
		body := map[string]any{"token": tok, "new_password": newPW, "method": "passkey", "ceremony_id": o.CeremonyID, "credential": auth.Assert(c, o.Challenge())}
		done := env.Call(t, "POST", "/v1/auth/recover/verify", "", body).Want(t, 200)
		if cl := testenv.Claims(t, done.Str("access_token")); cl["aal"] != "aal2" || !slices.Contains(testenv.Strings(cl["amr"]), "hwk") {
			t.Errorf("claims aal %v amr %v; want aal2 with hwk", cl["aal"], cl["amr"])
		}
		env.Login(t, m.Email, newPW).Want(t, 200)
		// The ceremony is spent, and so is the link.
		body["token"] = requestReset(t, env, m.Email)
		env.Call(t, "POST", "/v1/auth/recover/verify", "", body).Want(t, 400)

		n := verifiedTOTP(t, env)
		env.Call(t, "POST", "/v1/auth/recover/passkey", "", map[string]string{"token": requestReset(t, env, n.Email)}).Want(t, 400)
	})
}
