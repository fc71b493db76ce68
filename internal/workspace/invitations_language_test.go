package workspace_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestInvitationMailLanguage: an invitation sent through the JSON API is
// mailed in the invitee's preference when the address has an account,
// else in the request's Accept-Language, else in English; the role it
// names is in that language too.
func TestInvitationMailLanguage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		english, german := env.Register(t), env.Register(t)
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "en", english.UserID) // the account page's preference
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", german.UserID)  // the account page's preference
		stranger, plain := testenv.Email(), testenv.Email()

		invite := func(lang, email string) {
			t.Helper()
			r := env.DoIn(t, lang, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"emails": []string{email}, "role": "member"})
			if r.Status != 200 {
				t.Fatalf("invite %s: %d %s", email, r.Status, r.Body)
			}
			// The API's answer stays English.
			if strings.Contains(string(r.Body), "Mitglied") {
				t.Fatalf("a German API answer: %s", r.Body)
			}
		}
		invite("de-DE,de;q=0.9", stranger)      // no account: the request's language
		invite("de-DE,de;q=0.9", english.Email) // the preference wins over the header
		invite("", german.Email)                // the preference without a header
		invite("", plain)                       // neither: English
		env.WaitMail(t)
		for _, c := range []struct {
			to, subject, text string
		}{
			{stranger, "Sie sind eingeladen", "als Mitglied beizutreten"},
			{english.Email, "You are invited", "as member."},
			{german.Email, "Sie sind eingeladen", "als Mitglied beizutreten"},
			{plain, "You are invited", "as member."},
		} {
			m := lastMail(env, c.to)
			if !strings.HasPrefix(m.Subject, c.subject) || !strings.Contains(m.Text, c.text) {
				t.Errorf("invitation to %s: %q\n%s\nwant %q and %q", c.to, m.Subject, m.Text, c.subject, c.text)
			}
		}
	})
}

// lastMail is the last invitation to addr (its sign-up's confirmation
// may come before or after it).
func lastMail(env *testenv.Env, addr string) mailtest.Received {
	var out mailtest.Received
	for _, m := range env.Mail.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) && strings.Contains(m.Text, "/invite?token=") {
				out = m
			}
		}
	}
	return out
}
