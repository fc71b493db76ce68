package forms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

// TestFormAutoresponsesPerWorkspace checks that the autoresponse cap is
// the workspace's, all its forms together, so a new form does not reset
// it: two forms share forms.MaxAutoresponsesPerHour, a third made past it
// sends none, another workspace is not affected, and the hour rolls.
func TestFormAutoresponsesPerWorkspace(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		other, _ := env.Team(t)
		a, b := formsWithAutoresponder(t, env, owner.Token), formsWithAutoresponder(t, env, owner.Token)
		va, vb, vc := "a-"+testenv.RandomHex(4)+"@example.com", "b-"+testenv.RandomHex(4)+"@example.com", "c-"+testenv.RandomHex(4)+"@example.com"
		half := forms.MaxAutoresponsesPerHour/2 + 10
		for range half {
			formsSubmit(t, env, a, map[string]string{"email": va})
		}
		for range half {
			formsSubmit(t, env, b, map[string]string{"email": vb})
		}
		na, nb := len(formsMails(t, env, va, "Thanks")), len(formsMails(t, env, vb, "Thanks"))
		if na != half || nb != forms.MaxAutoresponsesPerHour-half {
			t.Errorf("autoresponses of two forms: %d and %d; want %d and %d (the workspace's %d)", na, nb, half, forms.MaxAutoresponsesPerHour-half, forms.MaxAutoresponsesPerHour)
		}
		c := formsWithAutoresponder(t, env, owner.Token)
		formsSubmit(t, env, c, map[string]string{"email": vc})
		if n := len(formsMails(t, env, vc, "Thanks")); n != 0 {
			t.Errorf("%d autoresponses from a form made past the cap; want 0", n)
		}
		elsewhere := "d-" + testenv.RandomHex(4) + "@example.com"
		formsSubmit(t, env, formsWithAutoresponder(t, env, other.Token), map[string]string{"email": elsewhere})
		if n := len(formsMails(t, env, elsewhere, "Thanks")); n != 1 {
			t.Errorf("%d autoresponses from another workspace's form; want 1", n)
		}
		env.Clock.Advance(time.Hour)
		formsSubmit(t, env, c, map[string]string{"email": vc})
		if n := len(formsMails(t, env, vc, "Thanks")); n != 1 {
			t.Errorf("%d autoresponses an hour later; want 1", n)
		}
	})
}

// TestFormConfirmationCapPerWorkspace checks that the day's confirmation
// links are the workspace's whatever happens to the destinations and
// forms that sent them: deleting the destinations, or making a new form,
// frees no room.
func TestFormConfirmationCapPerWorkspace(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		env.VerifyEmail(t, owner)
		newForm := func() string {
			return env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		}
		add := func(form string, to ...string) *testenv.Resp {
			return env.Do(t, "POST", "/forms/v1/forms/"+form+"/destinations", owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": to}})
		}
		f := newForm()
		var dests []string
		for _, n := range []int{forms.MaxRecipients, forms.MaxRecipients, forms.ConfirmMailsPerDay - 2*forms.MaxRecipients} {
			dests = append(dests, add(f, formsAddresses(n)...).Want(t, 200).Str("destination.id"))
		}
		for _, d := range dests {
			env.Do(t, "DELETE", "/forms/v1/forms/"+f+"/destinations/"+d, owner.Token, nil).Want(t, 200)
		}
		for _, form := range []string{f, newForm()} {
			over := formsAddresses(1)[0]
			r := add(form, over).Want(t, 429)
			if got, want := r.Header.Get("Retry-After"), strconv.Itoa(int((24 * time.Hour).Seconds())); got != want {
				t.Errorf("Retry-After = %q; want %s", got, want)
			}
			if n := len(formsMails(t, env, over, formsConfirmSubject)); n != 0 {
				t.Errorf("%d confirmation mails past the cap; want 0", n)
			}
		}
	})
}
