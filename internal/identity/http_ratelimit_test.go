package identity_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The abuse limits of docs/decisions.md. The env's clock is frozen, so no
// bucket refills while a test runs.

func TestSigninRateLimitLoginPerIP(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		for i := 1; i <= 30; i++ {
			if r := env.Login(t, a.Email, a.Password); r.Status != 200 {
				t.Fatalf("login %d of a burst of 30: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		env.RunCases(t, []testenv.Case{
			{Name: "31st login from one IP", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": a.Password},
				Want: 429, Check: testenv.WantRetryAfter},
			{Name: "any account from that IP", Method: "POST", Path: "/v1/auth/login",
				Body: map[string]string{"email": testenv.Email(), "password": "password-1"}, Want: 429, Check: testenv.WantRetryAfter},
			{Name: "other endpoints are not limited by the login bucket", Method: "GET", Path: "/v1/auth/me", Token: a.Access, Want: 200},
		})
		t.Run("login works again after Retry-After", func(t *testing.T) {
			loginAfterRetryAfter(t, env, a)
		})
	})
}

func TestSigninRateLimitFailedLoginsPerAccount(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		for i := 1; i <= 10; i++ {
			if r := env.Login(t, a.Email, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		const path = "/v1/auth/login"
		env.RunCases(t, []testenv.Case{
			{Name: "11th failed login", Method: "POST", Path: path, Body: map[string]string{"email": a.Email, "password": "wrong-password"},
				Want: 429, Check: testenv.WantRetryAfter},
			{Name: "right password from the failing IP is refused too", Method: "POST", Path: path,
				Body: map[string]string{"email": a.Email, "password": a.Password}, Want: 429, Check: testenv.WantRetryAfter},
			{Name: "same account in other case", Method: "POST", Path: path,
				Body: map[string]string{"email": " " + strings.ToUpper(a.Email), "password": a.Password}, Want: 429},
			{Name: "other account from the same IP", Method: "POST", Path: path, Body: map[string]string{"email": b.Email, "password": b.Password},
				Want: 200},
			{Name: "other account's wrong password is still a 401", Method: "POST", Path: path,
				Body: map[string]string{"email": b.Email, "password": "wrong-password"}, Want: 401},
		})
		t.Run("right password works again after Retry-After", func(t *testing.T) {
			loginAfterRetryAfter(t, env, a)
		})
		t.Run("right password from another IP passes the lock", func(t *testing.T) {
			env.LockOut(t, a.Email)
			env.Login(t, a.Email, a.Password).Want(t, 429)
			env.From(t, "127.0.0.2").Login(t, a.Email, a.Password).Want(t, 200)
		})
	})
}

func TestSigninRateLimitMagicLinkPerAddress(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		for i := 1; i <= 5; i++ {
			if r := env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}); r.Status != 200 {
				t.Fatalf("magic link %d for one address: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		const path = "/v1/auth/magic-link"
		env.RunCases(t, []testenv.Case{
			{Name: "6th link for the address", Method: "POST", Path: path, Body: map[string]string{"email": email}, Want: 429,
				Check: testenv.WantRetryAfter},
			{Name: "same address in other case", Method: "POST", Path: path, Body: map[string]string{"email": strings.ToUpper(email) + " "},
				Want: 429, Check: testenv.WantRetryAfter},
			{Name: "other address from the same IP", Method: "POST", Path: path, Body: map[string]string{"email": testenv.Email()}, Want: 200},
		})
		t.Run("refused requests sent no mail", func(t *testing.T) {
			env.WaitMail(t)
			if n := env.MailsTo(t, email); n != 5 {
				t.Errorf("sink holds %d mails to %s; want 5", n, email)
			}
		})
	})
}

func TestSigninRateLimitRegisterPerIP(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		for i := 1; i <= 20; i++ {
			if r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": testenv.Email(), "password": "password-1"}); r.Status != 200 {
				t.Fatalf("registration %d of a burst of 20: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		email := testenv.Email()
		env.RunCases(t, []testenv.Case{
			{Name: "21st registration from one IP", Method: "POST", Path: "/v1/auth/register",
				Body: map[string]string{"email": email, "password": "password-1"}, Want: 429, Check: testenv.WantRetryAfter},
			{Name: "the refused registration made no account", Method: "POST", Path: "/v1/auth/login",
				Body: map[string]string{"email": email, "password": "password-1"}, Want: 401},
		})
	})
}

func TestSigninRateLimitOff(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		for i := 1; i <= 100; i++ {
			if r := env.Login(t, a.Email, a.Password); r.Status != 200 {
				t.Fatalf("login %d of 100 without rate limits: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		for i := 1; i <= 20; i++ {
			if r := env.Login(t, a.Email, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d of 20 without rate limits: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		env.Login(t, a.Email, a.Password).Want(t, 200)
		email := testenv.Email()
		for i := 1; i <= 20; i++ {
			if r := env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}); r.Status != 200 {
				t.Fatalf("magic link %d of 20 without rate limits: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
	})
}

// loginAfterRetryAfter checks that a's right password is refused with 429,
// advances the env's clock by the Retry-After it names, and signs a in.
func loginAfterRetryAfter(t *testing.T, env *testenv.Env, a *testenv.Account) {
	t.Helper()
	r := env.Login(t, a.Email, a.Password).Want(t, 429)
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("Retry-After = %q; want seconds", r.Header.Get("Retry-After"))
	}
	env.Clock.Advance(time.Duration(secs) * time.Second)
	env.Login(t, a.Email, a.Password).Want(t, 200)
}
