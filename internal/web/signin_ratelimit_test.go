package web_test

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
			if r := signinLogin(t, env, a.Email, a.Password); r.Status != 200 {
				t.Fatalf("login %d of a burst of 30: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		runSigninCases(t, env, []signinCase{
			{name: "31st login from one IP", method: "POST", path: "/v1/auth/login", body: map[string]string{"email": a.Email, "password": a.Password},
				wantStatus: 429, wantBody: signinRetryAfter},
			{name: "any account from that IP", method: "POST", path: "/v1/auth/login",
				body: map[string]string{"email": testenv.Email(), "password": "password-1"}, wantStatus: 429, wantBody: signinRetryAfter},
			{name: "other endpoints are not limited by the login bucket", method: "GET", path: "/v1/auth/me", token: a.Access, wantStatus: 200},
		})
		t.Run("login works again after Retry-After", func(t *testing.T) {
			r := signinLogin(t, env, a.Email, a.Password).Want(t, 429)
			secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if err != nil {
				t.Fatalf("Retry-After = %q; want seconds", r.Header.Get("Retry-After"))
			}
			env.Clock.Advance(time.Duration(secs) * time.Second)
			signinLogin(t, env, a.Email, a.Password).Want(t, 200)
		})
	})
}

func TestSigninRateLimitFailedLoginsPerAccount(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		for i := 1; i <= 10; i++ {
			if r := signinLogin(t, env, a.Email, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		const path = "/v1/auth/login"
		runSigninCases(t, env, []signinCase{
			{name: "11th failed login", method: "POST", path: path, body: map[string]string{"email": a.Email, "password": "wrong-password"},
				wantStatus: 429, wantBody: signinRetryAfter},
			{name: "right password from the failing IP is refused too", method: "POST", path: path,
				body: map[string]string{"email": a.Email, "password": a.Password}, wantStatus: 429, wantBody: signinRetryAfter},
			{name: "same account in other case", method: "POST", path: path,
				body: map[string]string{"email": " " + strings.ToUpper(a.Email), "password": a.Password}, wantStatus: 429},
			{name: "other account from the same IP", method: "POST", path: path, body: map[string]string{"email": b.Email, "password": b.Password},
				wantStatus: 200},
			{name: "other account's wrong password is still a 401", method: "POST", path: path,
				body: map[string]string{"email": b.Email, "password": "wrong-password"}, wantStatus: 401},
		})
		t.Run("right password works again after Retry-After", func(t *testing.T) {
			r := signinLogin(t, env, a.Email, a.Password).Want(t, 429)
			secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if err != nil {
				t.Fatalf("Retry-After = %q; want seconds", r.Header.Get("Retry-After"))
			}
			env.Clock.Advance(time.Duration(secs) * time.Second)
			signinLogin(t, env, a.Email, a.Password).Want(t, 200)
		})
		t.Run("right password from another IP passes the lock", func(t *testing.T) {
			lockoutLock(t, env, a.Email)
			signinLogin(t, env, a.Email, a.Password).Want(t, 429)
			signinLogin(t, lockoutFrom(t, env, "127.0.0.2"), a.Email, a.Password).Want(t, 200)
		})
	})
}

func TestSigninRateLimitMagicLinkPerAddress(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		for i := 1; i <= 5; i++ {
			if r := signinCall(t, env, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}); r.Status != 200 {
				t.Fatalf("magic link %d for one address: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		const path = "/v1/auth/magic-link"
		runSigninCases(t, env, []signinCase{
			{name: "6th link for the address", method: "POST", path: path, body: map[string]string{"email": email}, wantStatus: 429,
				wantBody: signinRetryAfter},
			{name: "same address in other case", method: "POST", path: path, body: map[string]string{"email": strings.ToUpper(email) + " "},
				wantStatus: 429, wantBody: signinRetryAfter},
			{name: "other address from the same IP", method: "POST", path: path, body: map[string]string{"email": testenv.Email()}, wantStatus: 200},
		})
		t.Run("refused requests sent no mail", func(t *testing.T) {
			env.Svc.Wait()
			if n := signinMailsTo(env, email); n != 5 {
				t.Errorf("sink holds %d mails to %s; want 5", n, email)
			}
		})
	})
}

func TestSigninRateLimitRegisterPerIP(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		for i := 1; i <= 20; i++ {
			if r := signinCall(t, env, "POST", "/v1/auth/register", "", map[string]string{"email": testenv.Email(), "password": "password-1"}); r.Status != 200 {
				t.Fatalf("registration %d of a burst of 20: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		email := testenv.Email()
		runSigninCases(t, env, []signinCase{
			{name: "21st registration from one IP", method: "POST", path: "/v1/auth/register",
				body: map[string]string{"email": email, "password": "password-1"}, wantStatus: 429, wantBody: signinRetryAfter},
			{name: "the refused registration made no account", method: "POST", path: "/v1/auth/login",
				body: map[string]string{"email": email, "password": "password-1"}, wantStatus: 401},
		})
	})
}

func TestSigninRateLimitOff(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		for i := 1; i <= 100; i++ {
			if r := signinLogin(t, env, a.Email, a.Password); r.Status != 200 {
				t.Fatalf("login %d of 100 without rate limits: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
		for i := 1; i <= 20; i++ {
			if r := signinLogin(t, env, a.Email, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d of 20 without rate limits: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		signinLogin(t, env, a.Email, a.Password).Want(t, 200)
		email := testenv.Email()
		for i := 1; i <= 20; i++ {
			if r := signinCall(t, env, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}); r.Status != 200 {
				t.Fatalf("magic link %d of 20 without rate limits: status = %d, body %s; want 200", i, r.Status, r.Body)
			}
		}
	})
}
