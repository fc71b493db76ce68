package forms_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestFormsMailLanguage: a destination's confirmation mail and the
// submission notices go out in the recipient's preference when the
// address is a Gatehouse account's, else in the form owner's, else in
// the request's Accept-Language, else in English.
func TestFormsMailLanguage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		env.VerifyEmail(t, owner)
		german := env.Register(t)
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", german.UserID) // the account page's preference
		stranger, asked := testenv.Email(), testenv.Email()
		id := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Kontakt"}).Want(t, 200).Str("form.id")
		dests := "/forms/v1/forms/" + id + "/destinations"
		env.Do(t, "POST", dests, owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": []string{german.Email, stranger}}}).Want(t, 200)
		if r := env.DoIn(t, "de", "POST", dests, owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": []string{asked}}}); r.Status != 200 {
			t.Fatalf("destination: %d %s", r.Status, r.Body)
		}
		const de = "Bestätigen Sie, dass Sie Formulareinsendungen per E-Mail erhalten möchten"
		for to, want := range map[string]string{german.Email: de, stranger: formsConfirmSubject, asked: de} {
			ms := formsMails(t, env, to, want)
			if len(ms) != 1 {
				t.Errorf("%d confirmation mails %q to %s; want 1", len(ms), want, to)
				continue
			}
			if want == de {
				if leaks := i18n.EnglishLeaks(ms[0].Text); len(leaks) > 0 {
					t.Errorf("the German confirmation shows English: %q\n%s", leaks, ms[0].Text)
				}
			}
		}

		// Submission notices: the German account's in German, the
		// stranger's in English; with the owner preferring German, the
		// stranger's too.
		for to, subject := range map[string]string{german.Email: de, stranger: formsConfirmSubject} {
			tok := testenv.TokenFromLink(t, formsMails(t, env, to, subject)[0].Text, env.URL+"/forms/confirm?token=")
			if status, body := formsPage(t, env, "POST", "", map[string][]string{"token": {tok}}, "same-origin"); status != 200 {
				t.Fatalf("confirm: %d %s", status, body)
			}
		}
		formsSubmit(t, env, id, map[string]string{"message": "eins"})
		if n := len(formsMails(t, env, german.Email, "Neue Einsendung: Kontakt")); n != 1 {
			t.Errorf("%d German submission notices to the German account; want 1", n)
		}
		if n := len(formsMails(t, env, stranger, "New submission: Kontakt")); n != 1 {
			t.Errorf("%d English submission notices to the stranger; want 1", n)
		}
		env.Exec(t, `UPDATE users SET language = $1 WHERE id = $2`, "de", owner.UserID)
		formsSubmit(t, env, id, map[string]string{"message": "zwei"})
		ms := formsMails(t, env, stranger, "Neue Einsendung: Kontakt")
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "Eine neue Einsendung an Kontakt") {
			t.Errorf("the stranger's notice with a German owner: %d %v", len(ms), ms)
		}
	})
}
