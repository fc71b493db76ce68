package identity_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// resetLink is the start of the link a recovery mail holds (the test
// env's web base).
const resetLink = "http://web.test/reset-password?token="

// requestReset asks for a reset link for a and returns the token of the
// mail it sent.
func requestReset(t *testing.T, env *testenv.Env, email string) string {
	t.Helper()
	before := len(env.MailTexts(email, resetLink))
	env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": email}).Want(t, 200)
	return env.WaitMailToken(t, email, resetLink, before+1)
}

// resetBody is the body of POST /v1/auth/recover/verify.
func resetBody(tok, pw string) map[string]string {
	return map[string]string{"token": tok, "new_password": pw}
}

// TestRecoverNoEnumeration: a known and an unknown address get the same
// status and body; only the known one gets mail; a malformed address is
// 400 like everywhere else.
func TestRecoverNoEnumeration(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		unknown := testenv.Email()
		known := env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": a.Email}).Want(t, 200)
		other := env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": unknown}).Want(t, 200)
		if string(known.Body) != string(other.Body) {
			t.Fatalf("known address answered %s, unknown %s; want the same body", known.Body, other.Body)
		}
		testenv.WantMessage(t, known)
		env.MailToken(t, a.Email, resetLink)
		if n := env.MailsTo(t, unknown); n != 0 {
			t.Fatalf("%d mails to the unknown address; want 0", n)
		}
		env.RunCases(t, []testenv.Case{
			{Name: "malformed address", Method: "POST", Path: "/v1/auth/recover", Body: map[string]string{"email": "not-an-address"}, Want: 400},
			{Name: "missing address", Method: "POST", Path: "/v1/auth/recover", Body: map[string]string{}, Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "email as a number", Method: "POST", Path: "/v1/auth/recover", Body: map[string]any{"email": 5}, Want: 400},
			{Name: "mixed case of a known address", Method: "POST", Path: "/v1/auth/recover", Body: map[string]string{"email": " " + strings.ToUpper(a.Email)}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					if string(r.Body) != string(known.Body) {
						t.Fatalf("body %s; want %s", r.Body, known.Body)
					}
				}},
		})
	})
}

// TestRecoverResets: the link sets the password, revokes every other
// session (their refresh tokens and access tokens stop working), opens a
// session that works, and works once; bad tokens and refused passwords
// change nothing.
func TestRecoverResets(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		access2, refresh2 := env.NewSession(t, a)
		key := env.CreateUserKey(t, a.Access, map[string]any{"name": "registrant's key"}).Str("api_key.secret")
		tok := requestReset(t, env, a.Email)
		const path = "/v1/auth/recover/verify"
		newPW := "a fresh passphrase " + testenv.RandomHex(3)
		env.RunCases(t, []testenv.Case{
			{Name: "unknown token", Method: "POST", Path: path, Body: resetBody("not-a-token", newPW), Want: 401},
			{Name: "missing token", Method: "POST", Path: path, Body: map[string]string{"new_password": newPW}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "missing password", Method: "POST", Path: path, Body: map[string]string{"token": tok}, Want: 400, Check: testenv.ErrorNames("new_password")},
			{Name: "short password", Method: "POST", Path: path, Body: resetBody(tok, "short"), Want: 400, Check: testenv.ErrorNames("new_password", "8")},
			{Name: "common password", Method: "POST", Path: path, Body: resetBody(tok, "Password123"), Want: 400, Check: testenv.ErrorNames("too common")},
			{Name: "malformed JSON", Method: "POST", Path: path, Body: `{"token": `, Want: 400},
		})
		// Nothing changed: the old password and sessions still work.
		env.Login(t, a.Email, a.Password).Want(t, 200)
		env.Do(t, "GET", "/v1/me/sessions", access2, nil).Want(t, 200)

		r := env.Call(t, "POST", path, "", resetBody(tok, newPW)).Want(t, 200)
		// The link proved the mailbox: the address is verified now.
		env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Verified: true, Via: "magic_link", UserID: a.UserID, OrgID: a.OrgID})
		access, refresh := r.Str("access_token"), r.Str("refresh_token")

		if r := env.Call(t, "POST", path, "", resetBody(tok, newPW+"x")); r.Status != 401 {
			t.Fatalf("second use: %d %s; want 401", r.Status, r.Body)
		}
		env.Login(t, a.Email, a.Password).Want(t, 401)
		env.Login(t, a.Email, newPW).Want(t, 200)
		for _, rt := range []string{a.Refresh, refresh2} {
			env.Refresh(t, rt).Want(t, 401)
		}
		for _, at := range []string{a.Access, access2} {
			env.Do(t, "GET", "/v1/me/sessions", at, nil).Want(t, 401)
		}
		// An address never verified was claimed: the key made before is gone.
		env.Exchange(t, key).Want(t, 401)
		env.Do(t, "GET", "/v1/me/sessions", access, nil).Want(t, 200)
		env.Refresh(t, refresh).Want(t, 200)
	})
}

// TestRecoverExpiry: a link is good for one hour, and a newer link or a
// reset spends the older ones.
func TestRecoverExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := requestReset(t, env, a.Email)
		env.Clock.Advance(time.Hour + time.Second)
		env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(tok, "expired link's password")).Want(t, 401)
		env.Login(t, a.Email, a.Password).Want(t, 200)

		first := requestReset(t, env, a.Email)
		env.Clock.Advance(59 * time.Minute)
		second := requestReset(t, env, a.Email)
		env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(second, "second link's password")).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(first, "first link's password")).Want(t, 401)
		env.Login(t, a.Email, "second link's password").Want(t, 200)
	})
}

// TestRecoverSingleUseConcurrent: of 20 verifies of one link at once,
// exactly one sets the password; the others are 401.
func TestRecoverSingleUseConcurrent(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := requestReset(t, env, a.Email)
		const n = 20
		var errs [n]error
		answers := testenv.AtOnceAnswers(n, func(i int) *testenv.Resp {
			r, err := env.Try("POST", "/v1/auth/recover/verify", "", resetBody(tok, "concurrent password "+string(rune('a'+i))))
			errs[i] = err
			return r
		})
		won := -1
		for i, r := range answers {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			switch r.Status {
			case 200:
				if won >= 0 {
					t.Fatalf("verifies %d and %d both answered 200", won, i)
				}
				won = i
			case 401:
			default:
				t.Fatalf("verify %d: %d %s; want 200 once and 401", i, r.Status, r.Body)
			}
		}
		if won < 0 {
			t.Fatalf("no verify answered 200")
		}
		env.Login(t, a.Email, "concurrent password "+string(rune('a'+won))).Want(t, 200)
	})
}

// TestRecoverRateLimit: recovery requests are limited per IP (10, then 1
// a minute) and per address (5, then 1 per 2 minutes), for known and
// unknown addresses alike; verify attempts share the per-IP "verify"
// limit of the other emailed links (30, then 1 per 2 s).
func TestRecoverRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		for i := range 10 {
			if r := env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": testenv.Email()}); r.Status != 200 {
				t.Fatalf("request %d from one IP: %d; want 200", i+1, r.Status)
			}
		}
		r := env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": testenv.Email()}).Want(t, http.StatusTooManyRequests)
		testenv.WantRetryAfter(t, r)

		a := env.Register(t)
		for _, email := range []string{a.Email, testenv.Email()} {
			ip := 2
			for i := range 5 {
				from := env.From(t, "127.0.0."+string(rune('0'+ip)))
				ip++
				if r := from.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": email}); r.Status != 200 {
					t.Fatalf("request %d for one address: %d; want 200", i+1, r.Status)
				}
			}
			r := env.From(t, "127.0.0.9").Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": email}).Want(t, http.StatusTooManyRequests)
			testenv.WantRetryAfter(t, r)
		}

		guess := env.From(t, "127.0.1.1")
		for i := range 30 {
			if r := guess.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(testenv.RandomHex(16), "some long password")); r.Status != 401 {
				t.Fatalf("guess %d: %d; want 401", i+1, r.Status)
			}
		}
		guess.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(testenv.RandomHex(16), "some long password")).Want(t, http.StatusTooManyRequests)
	})
}
