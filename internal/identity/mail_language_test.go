package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestAPIMailLanguage: mail an API request causes (a reset link, a
// sign-in link, an email change's confirmation) is in the person's
// preference, else in the request's Accept-Language, else in English.
func TestAPIMailLanguage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		const de = "de-DE,de;q=0.9,en;q=0.5"
		noPref, prefEN, prefDE, plain := env.Register(t), env.Register(t), env.Register(t), env.Register(t)
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "en", prefEN.UserID) // the account page's preference
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", prefDE.UserID) // the account page's preference
		env.WaitMail(t)                                                                  // the sign-ups' confirmations

		recover := func(lang string, a *testenv.Account) {
			t.Helper()
			if r := env.DoIn(t, lang, "POST", "/v1/auth/recover", "", map[string]string{"email": a.Email}); r.Status != 200 {
				t.Fatalf("recover: %d %s", r.Status, r.Body)
			}
		}
		recover(de, noPref) // the request's language
		recover(de, prefEN) // the preference wins
		recover("", prefDE) // the preference without a header
		recover("", plain)  // neither: English
		env.WaitMail(t)
		for _, c := range []struct {
			a       *testenv.Account
			subject string
		}{{noPref, "Neues Passwort für"}, {prefEN, "Set a new"}, {prefDE, "Neues Passwort für"}, {plain, "Set a new"}} {
			if got := lastSubject(env, c.a.Email); !strings.HasPrefix(got, c.subject) {
				t.Errorf("reset mail to %s: %q; want %q…", c.a.Email, got, c.subject)
			}
		}

		// A sign-in link for an address with an account: its preference;
		// for a new address: the request's language.
		if r := env.DoIn(t, de, "POST", "/v1/auth/magic-link", "", map[string]string{"email": prefEN.Email}); r.Status != 200 {
			t.Fatalf("magic link: %d %s", r.Status, r.Body)
		}
		fresh := testenv.Email()
		if r := env.DoIn(t, de, "POST", "/v1/auth/magic-link", "", map[string]string{"email": fresh}); r.Status != 200 {
			t.Fatalf("magic link: %d %s", r.Status, r.Body)
		}
		env.WaitMail(t)
		if got := lastSubject(env, prefEN.Email); got != "Your sign-in link" {
			t.Errorf("sign-in link to an English account from a German request: %q", got)
		}
		if got := env.Mail.WaitFor(t, fresh, 10*time.Second).Subject; got != "Ihr Anmeldelink" {
			t.Errorf("sign-in link to a new address from a German request: %q", got)
		}

		// An email change asked through the API by a person without a
		// preference: the confirmation goes out in the request's language.
		to := testenv.Email()
		r := env.DoIn(t, de, "POST", "/v1/me/email", noPref.Access, map[string]string{"email": to})
		if r.Status >= 300 {
			t.Fatalf("email change: %d %s", r.Status, r.Body)
		}
		if m := env.Mail.WaitFor(t, to, 10*time.Second); !strings.Contains(m.Text, "Jemand möchte das") {
			t.Errorf("email change confirmation from a German request: %q\n%s", m.Subject, m.Text)
		}
	})
}

// lastSubject is the subject of the last message to addr.
func lastSubject(env *testenv.Env, addr string) string {
	s := ""
	for _, m := range env.Mail.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				s = m.Subject
			}
		}
	}
	return s
}
