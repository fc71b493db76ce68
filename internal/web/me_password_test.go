package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestChangePassword covers "POST /v1/me/password" (spec 4.2 rule 1;
// section 7: a wrong current password is 403, not 401).
func TestChangePassword(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("refused requests", func(t *testing.T) {
			a := env.Register(t)
			keyToken := meKeyToken(t, env, a)
			tests := []struct {
				name       string
				token      string
				body       any
				wantStatus int
			}{
				{"empty body", a.Access, "", 400},
				{"missing new_password", a.Access, map[string]any{"current_password": a.Password}, 400},
				{"new_password under 8 characters", a.Access, map[string]any{"current_password": a.Password, "new_password": "1234567"}, 400},
				{"new_password over 1024 bytes", a.Access, map[string]any{"current_password": a.Password, "new_password": strings.Repeat("x", 1025)}, 400},
				{"new_password not a string", a.Access, `{"new_password": 12345678}`, 400},
				{"missing current_password", a.Access, map[string]any{"new_password": "long-enough-1"}, 400},
				{"wrong current_password", a.Access, map[string]any{"current_password": "wrong-password", "new_password": "long-enough-1"}, 403},
				{"api-key token", keyToken, map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, 403},
				{"no token", "", map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, 401},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := env.Do(t, "POST", "/v1/me/password", tt.token, tt.body)
					if r.Status != tt.wantStatus {
						t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
					}
					meWantError(t, r)
				})
			}
			// None of them changed the password.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("change signs other sessions out", func(t *testing.T) {
			a := env.Register(t)
			_, refresh1 := meLogin(t, env, a)
			_, refresh2 := meLogin(t, env, a)
			const next = "a-brand-new-password"
			r := env.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": a.Password, "new_password": next}).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			checks := []struct {
				name       string
				path       string
				body       map[string]string
				wantStatus int
			}{
				{"old password", "/v1/auth/login", map[string]string{"email": a.Email, "password": a.Password}, 401},
				{"new password", "/v1/auth/login", map[string]string{"email": a.Email, "password": next}, 200},
				{"other session 1 refresh", "/v1/auth/refresh", map[string]string{"refresh_token": refresh1}, 401},
				{"other session 2 refresh", "/v1/auth/refresh", map[string]string{"refresh_token": refresh2}, 401},
				{"current session refresh", "/v1/auth/refresh", map[string]string{"refresh_token": a.Refresh}, 200},
			}
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) {
					r := env.Do(t, "POST", c.path, "", c.body)
					if r.Status != c.wantStatus {
						t.Errorf("status = %d, body %s; want %d", r.Status, r.Body, c.wantStatus)
					}
				})
			}
		})

		t.Run("magic-link account sets a first password", func(t *testing.T) {
			email := testenv.Email()
			env.Do(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}).Want(t, 200)
			m := env.Mail.WaitFor(t, email, 5*time.Second)
			tok := testenv.TokenFromLink(t, m.Text, "http://web.test/auth/magic?token=")
			s := env.Do(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
			access := s.Str("access_token")

			const first = "first-password-1"
			env.Do(t, "POST", "/v1/me/password", access, map[string]any{"new_password": first}).Want(t, 200)
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": first}).Want(t, 200)
			// Now the account has a password: the next change needs it.
			r := env.Do(t, "POST", "/v1/me/password", access, map[string]any{"new_password": "second-password-2"})
			if r.Status != 400 {
				t.Errorf("second change without current_password: status = %d, body %s; want 400", r.Status, r.Body)
			}
			env.Do(t, "POST", "/v1/me/password", access, map[string]any{"current_password": first, "new_password": "second-password-2"}).Want(t, 200)
		})
	})
}

// TestResendVerification covers "POST /v1/me/verify-email/resend" (spec
// 4.2 rule 2, section 8: no new mail while a usable link is under a minute
// old).
func TestResendVerification(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("throttled, sent, already verified", func(t *testing.T) {
			a := env.Register(t)
			if got := meMailCount(env, a.Email); got != 1 {
				t.Fatalf("mails after registration = %d; want 1", got)
			}
			resend := func() string {
				t.Helper()
				r := env.Do(t, "POST", "/v1/me/verify-email/resend", a.Access, nil).Want(t, 200)
				msg := r.Str("message")
				if msg == "" {
					t.Fatalf("body = %s; want a {message}", r.Body)
				}
				return msg
			}

			throttled := resend()
			if got := meMailCount(env, a.Email); got != 1 {
				t.Errorf("mails after a resend right after registration = %d; want 1 (throttled)", got)
			}

			env.Clock.Advance(61 * time.Second)
			sent := resend()
			if got := meMailCount(env, a.Email); got != 2 {
				t.Fatalf("mails after a resend 61 s later = %d; want 2", got)
			}
			if again := resend(); again != throttled {
				t.Errorf("resend right after a resend: message %q; want the throttled one %q", again, throttled)
			}
			if got := meMailCount(env, a.Email); got != 2 {
				t.Errorf("mails after a resend right after a resend = %d; want 2", got)
			}

			var last string
			for _, m := range env.Mail.Messages() {
				if len(m.To) == 1 && m.To[0] == a.Email {
					last = m.Text
				}
			}
			tok := testenv.TokenFromLink(t, last, "http://web.test/verify-email?token=")
			env.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)

			env.Clock.Advance(61 * time.Second)
			verified := resend()
			if got := meMailCount(env, a.Email); got != 2 {
				t.Errorf("mails after a resend on a verified account = %d; want 2", got)
			}

			if throttled == sent || sent == verified || throttled == verified {
				t.Errorf("messages throttled %q, sent %q, verified %q; want three different texts", throttled, sent, verified)
			}
		})

		t.Run("refused requests", func(t *testing.T) {
			a := env.Register(t)
			tests := []struct {
				name       string
				token      string
				wantStatus int
			}{
				{"api-key token", meKeyToken(t, env, a), 403},
				{"no token", "", 401},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					env.Clock.Advance(61 * time.Second)
					before := meMailCount(env, a.Email)
					r := env.Do(t, "POST", "/v1/me/verify-email/resend", tt.token, nil)
					if r.Status != tt.wantStatus {
						t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
					}
					meWantError(t, r)
					if got := meMailCount(env, a.Email); got != before {
						t.Errorf("mails = %d; want %d (none sent)", got, before)
					}
				})
			}
		})
	})
}
