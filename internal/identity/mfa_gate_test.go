package identity_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMFAGate: a token of a session owing its second factor reaches only
// the step, GET /v1/auth/me, GET /v1/auth/verify and logout; every other
// route (the API, org routes, tool APIs) answers 403 "two-factor
// authentication required". A user without a factor is untouched, and so
// are the API keys of a user with one.
func TestMFAGate(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		team := env.CreateOrg(t, &testenv.Account{Token: m.Access}, "Gate team")
		r := pendingLogin(t, env, m)
		pending := r.Str("access_token")
		gate := testenv.ErrorNames("two-factor authentication required")
		var cases []testenv.Case
		for _, rt := range [][3]string{
			{"GET", "/v1/me/orgs"}, {"GET", "/v1/me/sessions"}, {"GET", "/v1/me/factors"}, {"POST", "/v1/me/factors/totp"},
			{"POST", "/v1/me/recovery-codes"}, {"POST", "/v1/me/api-keys"}, {"PATCH", "/v1/me"}, {"DELETE", "/v1/me"},
			{"POST", "/v1/auth/switch-org"}, {"POST", "/v1/orgs"}, {"GET", "/v1/orgs/" + team}, {"GET", "/v1/orgs/" + team + "/members"},
			{"GET", "/v1/orgs/" + m.OrgID + "/audit"}, {"GET", "/tasks/v1/issues"}, {"GET", "/links/v1/links"}, {"GET", "/notes/v1/notes"},
		} {
			cases = append(cases, testenv.Case{Name: rt[0] + " " + rt[1], Method: rt[0], Path: rt[1], Token: pending, Body: map[string]any{}, Want: 403, Check: gate})
		}
		cases = append(cases,
			testenv.Case{Name: "me", Method: "GET", Path: "/v1/auth/me", Token: pending, Want: 200},
			testenv.Case{Name: "verify refuses it", Method: "GET", Path: "/v1/auth/verify", Token: pending, Want: 401},
			testenv.Case{Name: "aal2 verify", Method: "GET", Path: "/v1/auth/verify", Token: m.Access, Want: 200, Check: func(t *testing.T, r *testenv.Resp) {
				if _, ok := r.JSON()["mfa_required"]; ok {
					t.Errorf("mfa_required present for an aal2 token: %s", r.Body)
				}
			}},
			testenv.Case{Name: "aal2 tool API", Method: "GET", Path: "/tasks/v1/issues", Token: m.Access, Want: 200},
			testenv.Case{Name: "aal2 org route", Method: "GET", Path: "/v1/orgs/" + team, Token: m.Access, Want: 200},
		)
		env.RunCases(t, cases)
		// An API key of the account owes no factor; its tokens carry the
		// level of the session that made it (aal2 here).
		key := env.CreateUserKey(t, m.Access, map[string]any{"name": "ci"}).Str("api_key.secret")
		kt := env.Exchange(t, key).Want(t, 200).Str("access_token")
		if c := testenv.Claims(t, kt); c["aal"] != "aal2" || c["mfa"] != nil || testenv.Strings(c["amr"])[0] != "api_key" {
			t.Errorf("key token aal %v amr %v mfa %v; want aal2 [api_key] and no mfa", c["aal"], c["amr"], c["mfa"])
		}
		env.Call(t, "GET", "/tasks/v1/issues", kt, nil).Want(t, 200)
		// Logout ends the pending session.
		env.Call(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": r.Str("refresh_token")}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 401)
		// Without a factor: no mfa field, aal1 [pwd], routes answer.
		plain := env.Register(t)
		l := env.Login(t, plain.Email, plain.Password).Want(t, 200)
		if _, ok := l.JSON()["mfa"]; ok {
			t.Errorf("sign-in without a factor has mfa: %s", l.Body)
		}
		if c := testenv.Claims(t, l.Str("access_token")); c["aal"] != "aal1" || c["mfa"] != nil {
			t.Errorf("claims aal %v mfa %v; want aal1 and no mfa", c["aal"], c["mfa"])
		}
		env.Call(t, "GET", "/v1/me/orgs", l.Str("access_token"), nil).Want(t, 200)
	})
}

// TestMFANoBypass: a magic link of an account with a factor answers a
// session owing it; a password reset asks for the factor first.
func TestMFANoBypass(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		env.VerifyEmail(t, m.Account)
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": m.Email}).Want(t, 200)
		ml := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, m.Email)}).Want(t, 200)
		check := func(name string, r *testenv.Resp) {
			if r.Get("mfa.required") != true || testenv.Claims(t, r.Str("access_token"))["mfa"] != "pending" {
				t.Errorf("%s: mfa %v; want a session owing the factor", name, r.Get("mfa"))
			}
			env.Call(t, "GET", "/v1/me/orgs", r.Str("access_token"), nil).Want(t, 403)
		}
		// Checked before the reset, which ends every other session (the
		// magic link's token then answers 401).
		check("magic link", ml)
		// A reset asks for the factor in its own request (the link claimed
		// the address above, so the factor stays): refused without it,
		// and with it a session that owes nothing.
		tok := requestReset(t, env, m.Email)
		pw := "a fresh passphrase " + testenv.RandomHex(3)
		env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(tok, pw)).Want(t, 403)
		rs := env.Call(t, "POST", "/v1/auth/recover/verify", "", resetWith(tok, pw, "totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		env.Call(t, "GET", "/v1/auth/me", ml.Str("access_token"), nil).Want(t, 401)
		if amr := testenv.Strings(testenv.Claims(t, rs.Str("access_token"))["amr"]); len(amr) != 3 || amr[0] != "magic_link" || amr[1] != "otp" || amr[2] != "mfa" {
			t.Errorf("amr after a reset with the factor = %v; want [magic_link otp mfa]", amr)
		}
		env.Call(t, "GET", "/v1/me/orgs", rs.Str("access_token"), nil).Want(t, 200)
	})
}

// TestRecoveryCodes: a code works once; a used or unknown code is 401
// and changes nothing; regenerating voids the old set; removing the last
// factor voids the codes and sign-ins owe nothing again.
func TestRecoveryCodes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		p1 := pendingLogin(t, env, m)
		env.RunCases(t, []testenv.Case{
			{Name: "unknown code", Method: "POST", Path: "/v1/auth/mfa", Token: p1.Str("access_token"), Body: step("recovery_code", "aaaa-bbbb-cccc-dddd"), Want: 401},
			{Name: "empty code", Method: "POST", Path: "/v1/auth/mfa", Token: p1.Str("access_token"), Body: step("recovery_code", ""), Want: 400},
			{Name: "code in capitals without hyphens", Method: "POST", Path: "/v1/auth/mfa", Token: p1.Str("access_token"),
				Body: step("recovery_code", upperNoHyphen(m.Codes[0])), Want: 200, Check: func(t *testing.T, r *testenv.Resp) {
					if amr := testenv.Strings(testenv.Claims(t, r.Str("access_token"))["amr"]); len(amr) != 3 || amr[1] != "recovery_code" {
						t.Errorf("amr = %v; want [pwd recovery_code mfa]", amr)
					}
				}},
		})
		p2 := pendingLogin(t, env, m).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("recovery_code", m.Codes[0])).Want(t, 401) // exhausted
		if left := env.Call(t, "GET", "/v1/me/factors", m.Access, nil).Want(t, 200).Get("recovery_codes_left"); left != float64(9) {
			t.Errorf("recovery_codes_left = %v; want 9", left)
		}
		fresh := testenv.Strings(env.Call(t, "POST", "/v1/me/recovery-codes", m.Access, nil).Want(t, 200).Get("recovery_codes"))
		if len(fresh) != 10 {
			t.Fatalf("%d new codes; want 10", len(fresh))
		}
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("recovery_code", m.Codes[1])).Want(t, 401) // voided
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("recovery_code", fresh[0])).Want(t, 200)
		// Removing the factor voids the codes, ends the other sessions
		// (not the caller's); sign-ins owe nothing.
		other := env.Call(t, "POST", "/v1/auth/mfa", pendingLogin(t, env, m).Str("access_token"), step("recovery_code", fresh[1])).Want(t, 200)
		env.Call(t, "DELETE", "/v1/me/factors/"+m.FactorID, m.Access, nil).Want(t, 200)
		env.Refresh(t, other.Str("refresh_token")).Want(t, 401)
		env.Call(t, "GET", "/v1/me/sessions", m.Access, nil).Want(t, 200)
		env.Call(t, "DELETE", "/v1/me/factors/"+m.FactorID, m.Access, nil).Want(t, 404)
		l := env.Login(t, m.Email, m.Password).Want(t, 200)
		if _, ok := l.JSON()["mfa"]; ok {
			t.Errorf("sign-in after removing the factor has mfa: %s", l.Body)
		}
		env.Call(t, "POST", "/v1/me/recovery-codes", m.Access, nil).Want(t, 409)
		if left := env.Call(t, "GET", "/v1/me/factors", m.Access, nil).Want(t, 200).Get("recovery_codes_left"); left != float64(0) {
			t.Errorf("recovery_codes_left = %v; want 0", left)
		}
	})
}

// TestRecoveryCodeStrength: a recovery code carries at least 112 random
// bits (ASVS 5.0 6.5.2: its hash is a fast one), counted as its letters
// times the bits of its alphabet, and stays typeable: groups of four,
// taken back in capitals, with spaces for hyphens or none. A code of the
// older 80-bit form, stored before, still works (issue 23 item 7).
func TestRecoveryCodeStrength(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		seen := map[string]bool{}
		for _, c := range m.Codes {
			groups := strings.Split(c, "-")
			letters := strings.Join(groups, "")
			if strings.Trim(letters, "abcdefghijklmnopqrstuvwxyz234567") != "" {
				t.Fatalf("code %q is not base32 letters and digits", c)
			}
			if bits := float64(len(letters)) * math.Log2(32); bits < 112 || identity.RecoveryCodeBits < 112 {
				t.Errorf("code %q carries %.0f bits; want at least 112", c, bits)
			}
			for _, g := range groups {
				if len(g) != 4 {
					t.Errorf("code %q: group %q; want groups of four", c, g)
				}
			}
			if seen[letters] {
				t.Errorf("code %q given twice", c)
			}
			seen[letters] = true
		}
		typed := []string{
			upperNoHyphen(m.Codes[0]),
			"  " + strings.ReplaceAll(m.Codes[1], "-", " ") + "\t",
			strings.ToUpper(m.Codes[2]),
		}
		for _, c := range typed {
			env.Call(t, "POST", "/v1/auth/mfa", pendingLogin(t, env, m).Str("access_token"), step("recovery_code", c)).Want(t, 200)
		}
		const old = "abcd-efgh-ijkl-mnop"
		if _, err := env.Store.DB().Exec(`INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES ($1, $2, $3)`,
			identity.RecoveryHash(m.UserID, old), m.UserID, env.Clock.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
		env.Call(t, "POST", "/v1/auth/mfa", pendingLogin(t, env, m).Str("access_token"), step("recovery_code", "ABCD EFGH IJKL MNOP")).Want(t, 200)
	})
}

func upperNoHyphen(code string) string {
	out := []byte{}
	for _, c := range []byte(code) {
		if c != '-' {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
		}
	}
	return string(out)
}

// TestRecoveryCodeRace: 20 uses of one code at once, in the store and
// through the step from 20 sessions: exactly one succeeds.
func TestRecoveryCodeRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		var won atomic.Int32
		testenv.AtOnce(20, func(int) {
			err := env.Store.UseRecoveryCode(context.Background(), m.UserID, identity.RecoveryHash(m.UserID, m.Codes[0]), time.Now())
			if err == nil {
				won.Add(1)
			} else if !errors.Is(err, gatehouse.ErrNotFound) {
				t.Errorf("use: %v", err)
			}
		})
		if won.Load() != 1 {
			t.Fatalf("%d of 20 uses of one code succeeded in the store; want 1", won.Load())
		}
		sessions := make([]string, 20)
		for i := range sessions {
			sessions[i] = pendingLogin(t, env, m).Str("access_token")
		}
		answers := testenv.AtOnceAnswers(20, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/mfa", sessions[i], step("recovery_code", m.Codes[1]))
		})
		ok := 0
		for _, r := range answers {
			switch r.Status {
			case 200:
				ok++
			case 401, 429:
			default:
				t.Errorf("status %d, body %s; want 200, 401 or 429", r.Status, r.Body)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of 20 steps with one code succeeded; want 1", ok)
		}
	})
}

// TestTOTPReplayRace: one code presented by 10 sessions at once is
// accepted once (the conditional update of the factor's last step).
func TestTOTPReplayRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		// In the store: 20 uses of one time step, one wins.
		step0 := env.Clock.Now().Unix()/30 + 100
		var won atomic.Int32
		testenv.AtOnce(20, func(int) {
			err := env.Store.UseFactorStep(context.Background(), m.FactorID, step0, nil)
			if err == nil {
				won.Add(1)
			} else if !errors.Is(err, gatehouse.ErrNotFound) {
				t.Errorf("use step: %v", err)
			}
		})
		if won.Load() != 1 {
			t.Fatalf("%d of 20 uses of one time step succeeded in the store; want 1", won.Load())
		}
		env.Exec(t, `UPDATE mfa_factors SET last_step = 0 WHERE id = $1`, m.FactorID)
		sessions := make([]string, 10)
		for i := range sessions {
			sessions[i] = pendingLogin(t, env, m).Str("access_token")
		}
		code := totpAt(t, env, m.Secret, 0)
		answers := testenv.AtOnceAnswers(len(sessions), func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/mfa", sessions[i], step("totp", code))
		})
		ok := 0
		for _, r := range answers {
			switch r.Status {
			case 200:
				ok++
			case 401, 429:
			default:
				t.Errorf("status %d, body %s; want 200, 401 or 429", r.Status, r.Body)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of %d steps with one code succeeded; want 1", ok, len(sessions))
		}
	})
}
