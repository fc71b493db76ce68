package sign_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignMailLanguage: a signing request goes out in the signer's
// preference when the signer's address is a Gatehouse account's, else in
// the sender's preference, else in the sending request's Accept-Language,
// else in English; the German one shows no English sentence.
func TestSignMailLanguage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		german := env.Register(t)
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", german.UserID) // the account page's preference
		send := func(lang string, to ...string) {
			t.Helper()
			var rs []map[string]any
			for _, e := range to {
				rs = append(rs, map[string]any{"name": "Ada", "email": e})
			}
			doc := map[string]any{"name": "Mietvertrag", "recipients": rs, "expiresAt": "2099-01-02T03:04:05Z"}
			id := signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))["id"].(string)
			if r := env.DoIn(t, lang, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil); r.Status != 200 {
				t.Fatalf("send: %d %s", r.Status, r.Body)
			}
		}
		stranger, asked, owned := testenv.Email(), testenv.Email(), testenv.Email()
		send("", german.Email, stranger) // the signer's preference; English for the stranger
		send("de-DE,de;q=0.9", asked)    // the request's language
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", owner.UserID)
		send("", owned) // the sender's preference
		env.WaitMail(t)

		for _, c := range []struct {
			to, subject string
		}{{german.Email, "Bitte unterschreiben: Mietvertrag"}, {stranger, "Please sign: Mietvertrag"},
			{asked, "Bitte unterschreiben: Mietvertrag"}, {owned, "Bitte unterschreiben: Mietvertrag"}} {
			var subject, text string
			for _, m := range env.Mail.Messages() {
				if strings.EqualFold(m.To[0], c.to) && strings.Contains(m.Text, "/sign?token=") {
					subject, text = m.Subject, m.Text
				}
			}
			if subject != c.subject {
				t.Errorf("request to %s: %q; want %q", c.to, subject, c.subject)
			}
			if strings.HasPrefix(c.subject, "Bitte") {
				if !strings.Contains(text, "Der Link funktioniert bis 02.01.2099 03:04 UTC.") {
					t.Errorf("German request without a German date:\n%s", text)
				}
				if leaks := i18n.EnglishLeaks(text); len(leaks) > 0 {
					t.Errorf("the German request shows English: %q\n%s", leaks, text)
				}
			}
		}
	})
}
