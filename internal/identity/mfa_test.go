package identity_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// totpAt is the code of secret at the env's clock moved by steps.
func totpAt(t testing.TB, env *testenv.Env, secret string, steps int) string {
	t.Helper()
	at := env.Clock.Now().Add(time.Duration(steps) * 30 * time.Second)
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// mfaAccount is an account with a confirmed TOTP factor.
type mfaAccount struct {
	*testenv.Account
	FactorID, Secret string
	Codes            []string // the recovery codes
	Access           string   // the enrolling session, raised to aal2
}

// withTOTP registers an account and sets up its TOTP factor; the clock
// moves a step on, so the confirming code is not the next test's.
func withTOTP(t testing.TB, env *testenv.Env) *mfaAccount {
	t.Helper()
	return enrolTOTP(t, env, env.Register(t))
}

// enrolTOTP sets up a's TOTP factor (withTOTP's steps after sign-up).
func enrolTOTP(t testing.TB, env *testenv.Env, a *testenv.Account) *mfaAccount {
	t.Helper()
	e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
	m := &mfaAccount{Account: a, FactorID: e.Str("factor.id"), Secret: e.Str("secret")}
	c := env.Call(t, "POST", "/v1/me/factors/"+m.FactorID+"/confirm", a.Access, map[string]string{"code": totpAt(t, env, m.Secret, 0)}).Want(t, 200)
	m.Codes = testenv.Strings(c.Get("recovery_codes"))
	m.Access = c.Str("access_token")
	env.Clock.Advance(30 * time.Second)
	return m
}

// pendingLogin signs m in with the password: a session owing the factor.
func pendingLogin(t testing.TB, env *testenv.Env, m *mfaAccount) *testenv.Resp {
	t.Helper()
	return env.Login(t, m.Email, m.Password).Want(t, 200)
}

func step(method, code string) map[string]string {
	return map[string]string{"method": method, "code": code}
}

// TestTOTPEnrol: enrolment answers the secret, the otpauth URI and a QR
// code; a wrong code does not confirm; the right one does, answers ten
// recovery codes and an aal2 token, and ends the other sessions; the
// secret is sealed in the database and never logged.
func TestTOTPEnrol(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		_, otherRefresh := env.NewSession(t, a)
		e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
		id, secret := e.Str("factor.id"), e.Str("secret")
		if !strings.HasPrefix(e.Str("otpauth_uri"), "otpauth://totp/Gatehouse:") || !strings.Contains(e.Str("otpauth_uri"), "secret="+secret) {
			t.Errorf("otpauth_uri = %q; want otpauth://totp/Gatehouse:… with the secret", e.Str("otpauth_uri"))
		}
		if !strings.HasPrefix(e.Str("qr_code"), "data:image/png;base64,") || len(secret) != 32 || e.Get("factor.confirmed") != false {
			t.Errorf("qr_code %.30q, secret %q, confirmed %v; want a PNG data URL, 32 base32 letters, false", e.Str("qr_code"), secret, e.Get("factor.confirmed"))
		}
		var stored string
		if err := env.Store.DB().QueryRow(`SELECT secret FROM mfa_factors WHERE id = $1`, id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, secret) || stored == "" {
			t.Errorf("stored secret %q holds the plain secret", stored)
		}
		path := "/v1/me/factors/" + id + "/confirm"
		env.RunCases(t, []testenv.Case{
			{Name: "wrong code", Method: "POST", Path: path, Token: a.Access, Body: map[string]string{"code": "000000"}, Want: 400},
			{Name: "not digits", Method: "POST", Path: path, Token: a.Access, Body: map[string]string{"code": "abcdef"}, Want: 400},
			{Name: "code two steps ahead", Method: "POST", Path: path, Token: a.Access, Body: map[string]string{"code": totpAt(t, env, secret, 2)}, Want: 400},
			{Name: "unknown factor", Method: "POST", Path: "/v1/me/factors/0190f0f0-0000-7000-8000-000000000000/confirm", Token: a.Access, Body: map[string]string{"code": "123456"}, Want: 404},
			{Name: "no token", Method: "POST", Path: path, Body: map[string]string{"code": "123456"}, Want: 401},
		})
		if n := len(env.Call(t, "GET", "/v1/me/factors", a.Access, nil).Want(t, 200).List(t, "factors")); n != 1 {
			t.Fatalf("%d factors listed; want 1 unconfirmed", n)
		}
		env.Refresh(t, otherRefresh).Want(t, 200) // nothing changed yet
		_, otherRefresh = env.NewSession(t, a)
		c := env.Call(t, "POST", path, a.Access, map[string]string{"code": totpAt(t, env, secret, 1)}).Want(t, 200)
		if codes := testenv.Strings(c.Get("recovery_codes")); len(codes) != 10 {
			t.Errorf("recovery_codes = %v; want 10", codes)
		}
		cl := testenv.Claims(t, c.Str("access_token"))
		if cl["aal"] != "aal2" || !slices.Equal(testenv.Strings(cl["amr"]), []string{"pwd", "otp", "mfa"}) || cl["mfa"] != nil {
			t.Errorf("claims aal %v amr %v mfa %v; want aal2 [pwd otp mfa] and no mfa", cl["aal"], cl["amr"], cl["mfa"])
		}
		env.Refresh(t, otherRefresh).Want(t, 401)
		env.Call(t, "GET", "/v1/me/sessions", c.Str("access_token"), nil).Want(t, 200)
		env.Refresh(t, a.Refresh).Want(t, 200) // the confirming session lives on
		env.Call(t, "POST", path, a.Access, map[string]string{"code": totpAt(t, env, secret, 1)}).Want(t, 409)
		env.Call(t, "POST", "/v1/me/factors/totp", c.Str("access_token"), nil).Want(t, 409)
		if strings.Contains(env.Logs.String(), secret) {
			t.Error("the TOTP secret is in the logs")
		}
	})
}

// TestTOTPStep: a password sign-in of an account with a factor is an aal1
// session owing it; the step with a right code answers an aal2 session
// and revokes the first; the window is ±1 step; a code is used once.
func TestTOTPStep(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		r := pendingLogin(t, env, m)
		if r.Get("mfa.required") != true || !slices.Equal(testenv.Strings(r.Get("mfa.factors")), []string{"totp", "recovery_code"}) {
			t.Fatalf("mfa = %v; want required with [totp recovery_code]", r.Get("mfa"))
		}
		pending := r.Str("access_token")
		if c := testenv.Claims(t, pending); c["aal"] != "aal1" || c["mfa"] != "pending" {
			t.Fatalf("claims aal %v mfa %v; want aal1, pending", c["aal"], c["mfa"])
		}
		env.RunCases(t, []testenv.Case{
			{Name: "code two steps back", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: step("totp", totpAt(t, env, m.Secret, -2)), Want: 401},
			{Name: "code two steps ahead", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: step("totp", totpAt(t, env, m.Secret, 2)), Want: 401},
			{Name: "code of the confirmation (replay)", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: step("totp", totpAt(t, env, m.Secret, -1)), Want: 401},
			{Name: "unknown method", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: step("sms", "123456"), Want: 400},
			{Name: "short code", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: step("totp", "12345"), Want: 400},
			{Name: "malformed JSON", Method: "POST", Path: "/v1/auth/mfa", Token: pending, Body: `{"method":`, Want: 400},
			{Name: "an aal2 token owes nothing", Method: "POST", Path: "/v1/auth/mfa", Token: m.Access, Body: step("totp", totpAt(t, env, m.Secret, 0)), Want: 400},
		})
		env.Call(t, "GET", "/v1/me/factors", m.Access, nil).Want(t, 200) // nothing locked or changed
		ok := env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, m.Secret, 1))).Want(t, 200)
		if ok.Get("mfa") != nil {
			t.Errorf("mfa = %v after the step; want none", ok.Get("mfa"))
		}
		c := testenv.Claims(t, ok.Str("access_token"))
		if c["aal"] != "aal2" || !slices.Equal(testenv.Strings(c["amr"]), []string{"pwd", "otp", "mfa"}) || c["via"] != "password" || c["sid"] == testenv.SID(t, pending) {
			t.Errorf("claims aal %v amr %v via %v sid %v; want aal2 [pwd otp mfa] password and a new session", c["aal"], c["amr"], c["via"], c["sid"])
		}
		env.Call(t, "GET", "/v1/me/sessions", ok.Str("access_token"), nil).Want(t, 200)
		env.Refresh(t, r.Str("refresh_token")).Want(t, 401) // the aal1 session is revoked
		env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 401)
		// Refreshing keeps the level.
		fresh := env.Refresh(t, ok.Str("refresh_token")).Want(t, 200)
		if c := testenv.Claims(t, fresh.Str("access_token")); c["aal"] != "aal2" || !slices.Contains(testenv.Strings(c["amr"]), "mfa") {
			t.Errorf("refreshed claims aal %v amr %v; want aal2 with mfa", c["aal"], c["amr"])
		}
		// The code accepted (step +1) is refused to a second session; an
		// earlier one is too; the step after it works.
		p2 := pendingLogin(t, env, m).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("totp", totpAt(t, env, m.Secret, 1))).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 401)
		env.Clock.Advance(60 * time.Second)
		env.Call(t, "POST", "/v1/auth/mfa", p2, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		// A pending session refreshed still owes the factor.
		p3 := pendingLogin(t, env, m)
		pr := env.Refresh(t, p3.Str("refresh_token")).Want(t, 200)
		if pr.Get("mfa.required") != true || testenv.Claims(t, pr.Str("access_token"))["mfa"] != "pending" {
			t.Errorf("refreshed pending session: mfa %v claims %v; want still pending", pr.Get("mfa"), testenv.Claims(t, pr.Str("access_token")))
		}
		env.Call(t, "GET", "/v1/me/orgs", pr.Str("access_token"), nil).Want(t, 403)
		// A session owing the factor lives 15 minutes; refreshing does not
		// extend it.
		env.Clock.Advance(10 * time.Minute)
		pr = env.Refresh(t, pr.Str("refresh_token")).Want(t, 200)
		env.Clock.Advance(6 * time.Minute)
		env.Refresh(t, pr.Str("refresh_token")).Want(t, 401)
		env.Call(t, "POST", "/v1/auth/mfa", pr.Str("access_token"), step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 401)
	})
}

// TestTOTPLockout: five attempts per account in 15 minutes, then 429 with
// Retry-After even for the right code, on any session; the window ends.
func TestTOTPLockout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		pending := pendingLogin(t, env, m).Str("access_token")
		for i := 0; i < 5; i++ {
			env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", "000000")).Want(t, 401)
		}
		r := env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 429)
		testenv.WantRetryAfter(t, r)
		other := pendingLogin(t, env, m).Str("access_token")
		env.Call(t, "POST", "/v1/auth/mfa", other, step("recovery_code", m.Codes[0])).Want(t, 429)
		env.Clock.Advance(15 * time.Minute) // the window ends (and so do those sessions)
		env.Call(t, "POST", "/v1/auth/mfa", pendingLogin(t, env, m).Str("access_token"), step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 200)
		other = pendingLogin(t, env, m).Str("access_token")
		// A success clears the count.
		for i := 0; i < 4; i++ {
			env.Call(t, "POST", "/v1/auth/mfa", other, step("totp", "000000")).Want(t, 401)
		}
		env.Call(t, "POST", "/v1/auth/mfa", other, step("recovery_code", m.Codes[0])).Want(t, 200)
	})
}

// TestTOTPLockoutConcurrent: 100 wrong codes at once, on five sessions of
// one account, are all counted (the count is one upsert in each step's
// transaction, committed with the 401): five are 401 and the other 95
// are 429, and then the right code is 429 too. A wrong ConfirmTOTP code
// counts against the same window.
func TestTOTPLockoutConcurrent(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		wrong := wrongCode(t, env, m.Secret)
		sessions := make([]string, 5)
		for i := range sessions {
			sessions[i] = pendingLogin(t, env, m).Str("access_token")
		}
		answers := testenv.AtOnceAnswers(100, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/mfa", sessions[i%len(sessions)], step("totp", wrong))
		})
		counts := map[int]int{}
		for _, r := range answers {
			counts[r.Status]++
		}
		if counts[401] != 5 || counts[429] != 95 {
			t.Fatalf("100 wrong codes at once: statuses %v; want 5 × 401 and 95 × 429", counts)
		}
		env.Call(t, "POST", "/v1/auth/mfa", sessions[0], step("totp", totpAt(t, env, m.Secret, 0))).Want(t, 429)

		env.Clock.Advance(15 * time.Minute)
		a := env.Register(t)
		e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
		confirm := "/v1/me/factors/" + e.Str("factor.id") + "/confirm"
		for range 5 {
			env.Call(t, "POST", confirm, a.Access, map[string]string{"code": wrongCode(t, env, e.Str("secret"))}).Want(t, 400)
		}
		env.Call(t, "POST", confirm, a.Access, map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}).Want(t, 429)
	})
}

// wrongCode is a code of six digits that secret's codes near the env's
// clock are not.
func wrongCode(t testing.TB, env *testenv.Env, secret string) string {
	for _, c := range []string{"000000", "999999", "123456"} {
		if c != totpAt(t, env, secret, -1) && c != totpAt(t, env, secret, 0) && c != totpAt(t, env, secret, 1) {
			return c
		}
	}
	panic("unreachable: three codes cannot match three different guesses each")
}

// TestTOTPEnrolConcurrent: enrolments and confirmations of one account
// at once, through two instances, leave at most one TOTP factor, and at
// most one confirmed (issue 23 item 7): an enrolment replaces the pending
// one, meets a confirmed one with 409, and nothing answers 500.
func TestTOTPEnrolConcurrent(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		two := env.Another(t)
		for round := range 6 {
			a := env.Register(t)
			tokens := []string{a.Access, two.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")}
			envs := []*testenv.Env{env, two}
			first := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
			const n = 6
			statuses := make([][]int, n)
			testenv.AtOnce(n, func(i int) {
				e, tok := envs[i%2], tokens[i%2]
				id, secret := first.Str("factor.id"), first.Str("secret")
				if i > 0 {
					r := e.Do(t, "POST", "/v1/me/factors/totp", tok, nil)
					statuses[i] = append(statuses[i], r.Status)
					if r.Status != 201 {
						return
					}
					id, secret = r.Str("factor.id"), r.Str("secret")
				}
				r := e.Do(t, "POST", "/v1/me/factors/"+id+"/confirm", tok, map[string]string{"code": totpAt(t, env, secret, 0)})
				statuses[i] = append(statuses[i], r.Status)
			})
			for i, ss := range statuses {
				for _, s := range ss {
					if s >= 500 {
						t.Fatalf("round %d, request %d: statuses %v; want no 5xx", round, i, ss)
					}
				}
			}
			var all, confirmed int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*), COUNT(confirmed_at) FROM mfa_factors WHERE user_id = $1 AND kind = 'totp'`,
				a.UserID).Scan(&all, &confirmed); err != nil {
				t.Fatal(err)
			}
			if all > 1 || confirmed > 1 {
				t.Fatalf("round %d: %d TOTP factors, %d confirmed (statuses %v); want at most one", round, all, confirmed, statuses)
			}
		}
	})
}
