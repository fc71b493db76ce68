package forms_test

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

const formsConfirmSubject = "Confirm that you want form submissions by email"

// formsMails returns the mails to to whose subject starts with subject,
// once the Forms tool has handed every queued mail to the mailer.
func formsMails(t testing.TB, env *testenv.Env, to, subject string) []mailtest.Received {
	env.WaitMail(t)
	var out []mailtest.Received
	for _, m := range env.Mail.Messages() {
		if slices.Contains(m.To, to) && strings.HasPrefix(m.Subject, subject) {
			out = append(out, m)
		}
	}
	return out
}

// formsConfirm follows, as a browser does, the confirmation link mailed
// to to.
func formsConfirm(t *testing.T, env *testenv.Env, to string) {
	t.Helper()
	tok := formsConfirmToken(t, env, to)
	if status, body := formsPage(t, env, "POST", "", url.Values{"token": {tok}}, "same-origin"); status != 200 {
		t.Fatalf("confirm %s: %d %s", to, status, body)
	}
}

// formsConfirmToken returns the token of the confirmation link mailed to to.
func formsConfirmToken(t *testing.T, env *testenv.Env, to string) string {
	t.Helper()
	ms := formsMails(t, env, to, formsConfirmSubject)
	if len(ms) != 1 {
		t.Fatalf("%d confirmation mails to %s; want 1", len(ms), to)
	}
	return testenv.TokenFromLink(t, ms[0].Text, env.URL+"/forms/confirm?token=")
}

// formsPage sends a hosted-page request for /forms/confirm as a browser
// would, with its Sec-Fetch-Site header, and returns status and body.
func formsPage(t *testing.T, env *testenv.Env, method, query string, form url.Values, site string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, env.URL+"/forms/confirm"+query, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", site)
	res, err := env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(data)
}

// formsSubmit posts a public JSON submission to form id.
func formsSubmit(t *testing.T, env *testenv.Env, id string, data map[string]string) {
	t.Helper()
	env.Do(t, "POST", "/forms/f/"+id, "", data).Want(t, 200)
}

// TestFormDestinationConfirmation checks that an email destination address
// receives submissions only once confirmed: a member's verified address at
// once, any other address through the one link mailed to it (GET shows a
// button, POST confirms, once, within forms.ConfirmTTL).
func TestFormDestinationConfirmation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		env.VerifyEmail(t, owner)
		unverified := env.Join(t, owner, org, "member")
		outside := "outside-" + testenv.RandomHex(4) + "@example.com"
		id := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		dests := "/forms/v1/forms/" + id + "/destinations"

		d := env.Do(t, "POST", dests, owner.Token, map[string]any{"type": "email",
			"config": map[string]any{"to": []string{owner.Email, unverified.Email, outside}}}).Want(t, 200)
		if got := d.Get("destination.unconfirmed"); !sameStrings(got, unverified.Email, outside) {
			t.Errorf("unconfirmed = %v; want the unverified member and the outside address", got)
		}
		for to, want := range map[string]int{owner.Email: 0, unverified.Email: 1, outside: 1} {
			if got := len(formsMails(t, env, to, formsConfirmSubject)); got != want {
				t.Errorf("%d confirmation mails to %s; want %d", got, to, want)
			}
		}
		tok := formsConfirmToken(t, env, outside)

		formsSubmit(t, env, id, map[string]string{"message": "first"})
		for to, want := range map[string]int{owner.Email: 1, unverified.Email: 0, outside: 0} {
			if got := len(formsMails(t, env, to, "New submission")); got != want {
				t.Errorf("before confirming: %d submission mails to %s; want %d", got, to, want)
			}
		}

		// GET (what a mail scanner does) shows a button and confirms nothing.
		if status, body := formsPage(t, env, "GET", "?token="+url.QueryEscape(tok), nil, "none"); status != 200 ||
			!strings.Contains(body, `action="confirm"`) || !strings.Contains(body, "Send me the submissions") {
			t.Fatalf("GET confirm page: %d %s", status, body)
		}
		// A cross-site POST is refused and consumes nothing.
		if status, _ := formsPage(t, env, "POST", "", url.Values{"token": {tok}}, "cross-site"); status != 403 {
			t.Errorf("cross-site POST: %d; want 403", status)
		}
		formsSubmit(t, env, id, map[string]string{"message": "second"})
		if got := len(formsMails(t, env, outside, "New submission")); got != 0 {
			t.Fatalf("%d submission mails to %s after GET; want none", got, outside)
		}

		if status, body := formsPage(t, env, "POST", "", url.Values{"token": {tok}}, "same-origin"); status != 200 ||
			!strings.Contains(body, "Address confirmed") || !strings.Contains(body, outside) {
			t.Fatalf("POST confirm: %d %s", status, body)
		}
		if status, body := formsPage(t, env, "POST", "", url.Values{"token": {tok}}, "same-origin"); status != 404 ||
			!strings.Contains(body, "not valid") {
			t.Errorf("second POST: %d %s; want the 404 error page", status, body)
		}
		if status, _ := formsPage(t, env, "POST", "", url.Values{"token": {"nope"}}, "same-origin"); status != 404 {
			t.Errorf("unknown token: %d; want 404", status)
		}
		list := env.Do(t, "GET", dests, owner.Token, nil).Want(t, 200)
		if got := list.Get("destinations").([]any)[0].(map[string]any)["unconfirmed"]; !sameStrings(got, unverified.Email) {
			t.Errorf("unconfirmed after confirming = %v; want only the unverified member", got)
		}

		formsSubmit(t, env, id, map[string]string{"message": "third"})
		for to, want := range map[string]int{owner.Email: 3, unverified.Email: 0, outside: 1} {
			if got := len(formsMails(t, env, to, "New submission")); got != want {
				t.Errorf("after confirming: %d submission mails to %s; want %d", got, to, want)
			}
		}
		confirmed := 0
		for _, e := range env.Audit(t, owner.Token, org, "tool=forms") {
			if e["action"] == "forms.destination.confirmed" {
				confirmed++
			}
		}
		if confirmed != 1 {
			t.Errorf("%d forms.destination.confirmed entries; want 1", confirmed)
		}

		// A link expires after forms.ConfirmTTL.
		late := "late-" + testenv.RandomHex(4) + "@example.com"
		env.Do(t, "POST", dests, owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": []string{late}}}).Want(t, 200)
		lateTok := formsConfirmToken(t, env, late)
		env.Clock.Advance(forms.ConfirmTTL + time.Second)
		if status, _ := formsPage(t, env, "POST", "", url.Values{"token": {lateTok}}, "same-origin"); status != 404 {
			t.Errorf("expired token: %d; want 404", status)
		}
	})
}

// sameStrings reports whether v, a decoded JSON list, holds exactly want
// in any order.
func sameStrings(v any, want ...string) bool {
	list, ok := v.([]any)
	if !ok || len(list) != len(want) {
		return false
	}
	for _, e := range list {
		if s, _ := e.(string); !slices.Contains(want, s) {
			return false
		}
	}
	return true
}

// TestFormAutoresponderLimits checks that spam gets no autoresponse and
// that a workspace's form sends at most forms.MaxAutoresponsesPerHour in
// a rolling hour, the submissions past it still accepted and stored.
func TestFormAutoresponderLimits(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		other, _ := env.Team(t) // the cap is the workspace's: the crowd goes to another's form
		id, busy := formsWithAutoresponder(t, env, owner.Token), formsWithAutoresponder(t, env, other.Token)
		visitor := "visitor-" + testenv.RandomHex(4) + "@example.com"

		formsSubmit(t, env, id, map[string]string{"email": visitor, "_gotcha": "bot"})
		if got := len(formsMails(t, env, visitor, "Thanks")); got != 0 {
			t.Fatalf("%d autoresponses to spam; want none", got)
		}
		for range forms.MaxAutoresponsesPerHour + 5 {
			formsSubmit(t, env, id, map[string]string{"email": visitor})
		}
		if got := len(formsMails(t, env, visitor, "Thanks")); got != forms.MaxAutoresponsesPerHour {
			t.Errorf("%d autoresponses in an hour; want %d", got, forms.MaxAutoresponsesPerHour)
		}
		subs := env.Do(t, "GET", "/forms/v1/forms/"+id+"/submissions", owner.Token, nil).Want(t, 200).Get("submissions").([]any)
		if len(subs) != forms.MaxAutoresponsesPerHour+6 {
			t.Errorf("%d submissions stored; want %d", len(subs), forms.MaxAutoresponsesPerHour+6)
		}
		env.Clock.Advance(time.Hour)
		formsSubmit(t, env, id, map[string]string{"email": visitor})
		if got := len(formsMails(t, env, visitor, "Thanks")); got != forms.MaxAutoresponsesPerHour+1 {
			t.Errorf("%d autoresponses an hour later; want %d", got, forms.MaxAutoresponsesPerHour+1)
		}

		// Concurrent submissions count one at a time: still no more than the cap.
		crowd := "crowd-" + testenv.RandomHex(4) + "@example.com"
		var wg sync.WaitGroup
		statuses := make([]int, forms.MaxAutoresponsesPerHour+10)
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = env.Do(t, "POST", "/forms/f/"+busy, "", map[string]string{"email": crowd}).Status
			})
		}
		wg.Wait()
		if slices.ContainsFunc(statuses, func(s int) bool { return s != 200 }) {
			t.Errorf("concurrent submissions answered %v; want all 200", statuses)
		}
		if got := len(formsMails(t, env, crowd, "Thanks")); got != forms.MaxAutoresponsesPerHour {
			t.Errorf("%d autoresponses to concurrent submissions; want %d", got, forms.MaxAutoresponsesPerHour)
		}
	})
}

// TestFormAutoresponderNoMailLimits checks that with mail limits off the
// hourly cap is off but spam still gets no autoresponse.
func TestFormAutoresponderNoMailLimits(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: false}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		id := formsWithAutoresponder(t, env, owner.Token)
		visitor := "visitor-" + testenv.RandomHex(4) + "@example.com"
		formsSubmit(t, env, id, map[string]string{"email": visitor, "_gotcha": "bot"})
		for range forms.MaxAutoresponsesPerHour + 5 {
			formsSubmit(t, env, id, map[string]string{"email": visitor})
		}
		if got := len(formsMails(t, env, visitor, "Thanks")); got != forms.MaxAutoresponsesPerHour+5 {
			t.Errorf("%d autoresponses with mail limits off; want %d (none to the spam)", got, forms.MaxAutoresponsesPerHour+5)
		}
	})
}

// formsWithAutoresponder creates a form whose autoresponder says "Thanks".
func formsWithAutoresponder(t *testing.T, env *testenv.Env, token string) string {
	t.Helper()
	return env.Do(t, "POST", "/forms/v1/forms", token, map[string]any{"name": "Contact",
		"autoresponder": map[string]any{"enabled": true, "subject": "Thanks", "body": "We got it."}}).Want(t, 200).Str("form.id")
}

// formsAddresses returns n fresh outside addresses.
func formsAddresses(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "outside-" + testenv.RandomHex(6) + "@example.com"
	}
	return out
}

func TestFormConfirmationMailLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		env.VerifyEmail(t, owner)
		id := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		dests := "/forms/v1/forms/" + id + "/destinations"
		add := func(to ...string) *testenv.Resp {
			return env.Do(t, "POST", dests, owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": to}})
		}
		// advance moves the clock on and mints a fresh token for the org.
		advance := func(d time.Duration) {
			env.Clock.Advance(d)
			r := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": owner.Refresh}).Want(t, 200)
			owner.Refresh = r.Str("refresh_token")
			owner.Token = env.Do(t, "POST", "/v1/auth/switch-org", r.Str("access_token"), map[string]string{"org_id": org}).Want(t, 200).Str("access_token")
		}
		// Two full destinations an hour apart and ten more addresses fill
		// the day's 50.
		add(formsAddresses(forms.MaxRecipients)...).Want(t, 200)
		advance(time.Hour)
		add(formsAddresses(forms.MaxRecipients)...).Want(t, 200)
		add(formsAddresses(forms.ConfirmMailsPerDay-2*forms.MaxRecipients)...).Want(t, 200)

		over := formsAddresses(1)[0]
		r := add(over).Want(t, 429)
		if got, want := r.Header.Get("Retry-After"), strconv.Itoa(int((23 * time.Hour).Seconds())); got != want {
			t.Errorf("Retry-After = %q; want %s (the first mails leave the window in 23 h)", got, want)
		}
		if r.Str("error") == "" {
			t.Errorf("429 body %s; want {error}", r.Body)
		}
		if n := len(formsMails(t, env, over, formsConfirmSubject)); n != 0 {
			t.Errorf("%d confirmation mails past the limit; want 0", n)
		}
		list := env.Do(t, "GET", dests, owner.Token, nil).Want(t, 200)
		if n := len(list.Get("destinations").([]any)); n != 3 {
			t.Errorf("%d destinations after the refused create; want 3", n)
		}
		// A member's verified address needs no mail, so it is not limited.
		add(owner.Email).Want(t, 200)
		// The first 20 leave the window after a day: 20 fit again, 21 not.
		advance(23 * time.Hour)
		add(formsAddresses(forms.MaxRecipients)...).Want(t, 200)
		add(over).Want(t, 429)
	})
	testenv.RunWith(t, testenv.Options{MailLimits: false}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		id := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		for range forms.ConfirmMailsPerDay/forms.MaxRecipients + 1 {
			env.Do(t, "POST", "/forms/v1/forms/"+id+"/destinations", owner.Token, map[string]any{"type": "email",
				"config": map[string]any{"to": formsAddresses(forms.MaxRecipients)}}).Want(t, 200)
		}
	})
}
