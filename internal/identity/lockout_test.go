package identity_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The per-account lockout (issue 10 items 5 and 13; docs/decisions.md,
// "Sign-in"): ten wrong passwords lock the account; while locked an IP that
// failed is refused unchecked, another IP gets a checked guess (capped at
// three per account), and a magic-link sign-in unlocks.

func TestSigninLockoutLetsTheOwnerIn(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.LockOut(t, a.Email)
		other, third := env.From(t, "127.0.0.2"), env.From(t, "127.0.0.3")
		steps := []struct {
			name       string
			from       *testenv.Env
			password   string
			wantStatus int
		}{
			{"right password from the failing IP is refused unchecked", env, a.Password, 429},
			{"right password from another IP signs in", other, a.Password, 200},
			{"which unlocks the account for the failing IP too", env, a.Password, 200},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				r := s.from.Login(t, a.Email, s.password)
				if r.Status != s.wantStatus {
					t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, s.wantStatus)
				}
				if r.Status == 429 {
					testenv.WantRetryAfter(t, r)
				}
			})
		}
		t.Run("a wrong guess from a clean IP while locked is 429 and marks that IP", func(t *testing.T) {
			env.LockOut(t, a.Email)
			r := third.Login(t, a.Email, "wrong-password").Want(t, 429)
			testenv.WantRetryAfter(t, r)
			third.Login(t, a.Email, a.Password).Want(t, 429)
			other.Login(t, a.Email, a.Password).Want(t, 200)
		})
	})
}

func TestSigninLockoutCapsCheckedGuesses(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		// Verified, so the magic link below only signs in: on an
		// unverified account it would claim the mailbox and remove the
		// password (auth_takeover_test.go).
		env.VerifyEmail(t, a)
		env.LockOut(t, a.Email)
		for i := 2; i <= 4; i++ {
			from := env.From(t, fmt.Sprintf("127.0.0.%d", i))
			from.Login(t, a.Email, "wrong-password").Want(t, 429)
		}
		clean := env.From(t, "127.0.0.5")
		t.Run("past the cap even the right password from a clean IP is refused", func(t *testing.T) {
			testenv.WantRetryAfter(t, clean.Login(t, a.Email, a.Password).Want(t, 429))
		})
		t.Run("a magic-link sign-in unlocks the account", func(t *testing.T) {
			tok := env.MagicToken(t, a.Email)
			env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
			env.Login(t, a.Email, a.Password).Want(t, 200)
		})
		t.Run("the per-minute token still opens one checked guess", func(t *testing.T) {
			env.LockOut(t, a.Email)
			env.Login(t, a.Email, a.Password).Want(t, 429)
			env.Clock.Advance(time.Minute)
			env.Login(t, a.Email, a.Password).Want(t, 200)
		})
	})
}

func TestChangePasswordSharesTheLockout(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		change := func(from *testenv.Env, a *testenv.Account, current string) *testenv.Resp {
			return from.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": current, "new_password": "a-brand-new-password"})
		}
		other := env.From(t, "127.0.0.2")
		t.Run("wrong current passwords lock the account", func(t *testing.T) {
			a := env.Register(t)
			for i := 1; i <= 10; i++ {
				if r := change(env, a, "wrong-password"); r.Status != 403 {
					t.Fatalf("wrong current password %d: status = %d, body %s; want 403", i, r.Status, r.Body)
				}
			}
			testenv.WantRetryAfter(t, change(env, a, "wrong-password").Want(t, 429))
			testenv.WantRetryAfter(t, change(env, a, a.Password).Want(t, 429))
			env.Login(t, a.Email, a.Password).Want(t, 429)
			change(other, a, a.Password).Want(t, 200)
		})
		t.Run("failed sign-ins lock the password change", func(t *testing.T) {
			a := env.Register(t)
			env.LockOut(t, a.Email)
			testenv.WantRetryAfter(t, change(env, a, a.Password).Want(t, 429))
			change(other, a, a.Password).Want(t, 200)
		})
	})
}

func TestSigninPageSharesTheLockout(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.LockOut(t, a.Email)
		form := url.Values{"email": {a.Email}, "password": {a.Password}}
		b := env.NewBrowser(t)
		res := b.Do(t, "POST", "/signin", form)
		if res.Status != 429 || !strings.Contains(res.Body, "Too many failed attempts") {
			t.Fatalf("page sign-in from the failing IP: %d %s; want 429 naming the failed attempts", res.Status, res.Body)
		}
		b2 := env.NewBrowser(t).From(t, "127.0.0.2")
		if res := b2.Do(t, "POST", "/signin", form); res.Status != http.StatusSeeOther {
			t.Fatalf("page sign-in from another IP: %d %s; want 303", res.Status, res.Body)
		}
	})
}
