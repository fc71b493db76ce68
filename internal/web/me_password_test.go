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
			keyToken := env.KeyToken(t, a)
			env.RunCases(t, []testenv.Case{
				{Name: "empty body", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: "", Want: 400},
				{Name: "missing new_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password}, Want: 400},
				{Name: "new_password under 8 characters", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password, "new_password": "1234567"}, Want: 400},
				{Name: "new_password over 1024 bytes", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password, "new_password": strings.Repeat("x", 1025)}, Want: 400},
				{Name: "new_password not a string", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: `{"new_password": 12345678}`, Want: 400},
				{Name: "missing current_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"new_password": "long-enough-1"}, Want: 400},
				{Name: "wrong current_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": "wrong-password", "new_password": "long-enough-1"}, Want: 403},
				{Name: "api-key token", Method: "POST", Path: "/v1/me/password", Token: keyToken, Body: map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, Want: 403},
				{Name: "no token", Method: "POST", Path: "/v1/me/password", Body: map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, Want: 401},
			})
			// None of them changed the password.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("change signs other sessions out", func(t *testing.T) {
			a := env.Register(t)
			_, refresh1 := env.NewSession(t, a)
			_, refresh2 := env.NewSession(t, a)
			const next = "a-brand-new-password"
			r := env.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": a.Password, "new_password": next}).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.RunCases(t, []testenv.Case{
				{Name: "old password", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": a.Password}, Want: 401},
				{Name: "new password", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": next}, Want: 200},
				{Name: "other session 1 refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": refresh1}, Want: 401},
				{Name: "other session 2 refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": refresh2}, Want: 401},
				{Name: "current session refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": a.Refresh}, Want: 200},
			})
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
			if got := env.MailsTo(a.Email); got != 1 {
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
			if got := env.MailsTo(a.Email); got != 1 {
				t.Errorf("mails after a resend right after registration = %d; want 1 (throttled)", got)
			}

			env.Clock.Advance(61 * time.Second)
			sent := resend()
			if got := env.MailsTo(a.Email); got != 2 {
				t.Fatalf("mails after a resend 61 s later = %d; want 2", got)
			}
			if again := resend(); again != throttled {
				t.Errorf("resend right after a resend: message %q; want the throttled one %q", again, throttled)
			}
			if got := env.MailsTo(a.Email); got != 2 {
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
			if got := env.MailsTo(a.Email); got != 2 {
				t.Errorf("mails after a resend on a verified account = %d; want 2", got)
			}

			if throttled == sent || sent == verified || throttled == verified {
				t.Errorf("messages throttled %q, sent %q, verified %q; want three different texts", throttled, sent, verified)
			}
		})

		t.Run("refused requests", func(t *testing.T) {
			a := env.Register(t)
			// Each refusal starts past the throttle minute and must send no mail.
			var before int
			advance := func(t *testing.T) {
				env.Clock.Advance(61 * time.Second)
				before = env.MailsTo(a.Email)
			}
			noMail := func(t *testing.T, r *testenv.Resp) {
				if got := env.MailsTo(a.Email); got != before {
					t.Errorf("mails = %d; want %d (none sent)", got, before)
				}
			}
			const path = "/v1/me/verify-email/resend"
			env.RunCases(t, []testenv.Case{
				{Name: "api-key token", Method: "POST", Path: path, Token: env.KeyToken(t, a), Want: 403, Before: advance, Check: noMail},
				{Name: "no token", Method: "POST", Path: path, Want: 401, Before: advance, Check: noMail},
			})
		})
	})
}
