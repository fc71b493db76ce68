package forms_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestForms checks the Forms tool API: forms, destinations, the tool gate
// and workspace scoping, with their audit entries.
func TestForms(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		stranger, _ := env.Team(t)

		env.Do(t, "GET", "/forms/v1/forms", "", nil).Want(t, 401)
		for _, body := range []any{map[string]any{}, map[string]any{"name": " "}, map[string]any{"name": 5},
			map[string]any{"name": "Contact", "autoresponder": map[string]any{"enabled": true}}} {
			env.Do(t, "POST", "/forms/v1/forms", owner.Token, body).Want(t, 400)
		}
		r := env.Do(t, "POST", "/forms/v1/forms", member.Token, map[string]any{"name": "Contact",
			"autoresponder": map[string]any{"enabled": true, "subject": "Thanks", "body": "We got it."}}).Want(t, 200)
		form := r.Obj(t, "form")
		testenv.CheckKeys(t, "form", form, "id", "name", "endpoint", "autoresponder", "redirectOrigins", "created")
		id := r.Str("form.id")
		if form["name"] != "Contact" || form["endpoint"] != env.URL+"/forms/f/"+id || r.Get("form.autoresponder.enabled") != true {
			t.Errorf("form = %s", r.Body)
		}
		if got := env.Do(t, "GET", "/forms/v1/forms", owner.Token, nil).Want(t, 200).Get("forms").([]any); len(got) != 1 {
			t.Errorf("forms = %v; want the one form", got)
		}
		env.Do(t, "GET", "/forms/v1/forms/"+id, owner.Token, nil).Want(t, 200)
		for _, path := range []string{"/forms/v1/forms/" + id, "/forms/v1/forms/" + id + "/submissions", "/forms/v1/forms/" + id + "/destinations"} {
			env.Do(t, "GET", path, stranger.Token, nil).Want(t, 404)
		}
		env.Do(t, "GET", "/forms/v1/forms/"+uuid.NewString(), owner.Token, nil).Want(t, 404)
		if got := env.Do(t, "GET", "/forms/v1/forms", stranger.Token, nil).Want(t, 200).Get("forms").([]any); len(got) != 0 {
			t.Errorf("stranger lists %v; want none", got)
		}

		dests := "/forms/v1/forms/" + id + "/destinations"
		for _, body := range []any{map[string]any{"type": "slack", "config": map[string]any{"to": []string{"a@example.com"}}},
			map[string]any{"type": "email"}, map[string]any{"type": "email", "config": map[string]any{"to": []string{}}},
			map[string]any{"type": "email", "config": map[string]any{"to": []string{"not-an-address"}}}} {
			env.Do(t, "POST", dests, owner.Token, body).Want(t, 400)
		}
		d := env.Do(t, "POST", dests, owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": []string{"Inbox@Example.com"}}}).Want(t, 200)
		did := d.Str("destination.id")
		if d.Str("destination.type") != "email" || !strings.Contains(string(d.Body), `"to":["inbox@example.com"]`) {
			t.Errorf("destination = %s", d.Body)
		}
		if got := env.Do(t, "GET", dests, member.Token, nil).Want(t, 200).Get("destinations").([]any); len(got) != 1 {
			t.Errorf("destinations = %v; want one", got)
		}
		env.Do(t, "DELETE", dests+"/"+did, stranger.Token, nil).Want(t, 404)
		env.Do(t, "DELETE", dests+"/"+uuid.NewString(), owner.Token, nil).Want(t, 404)
		env.Do(t, "DELETE", dests+"/"+did, owner.Token, nil).Want(t, 200)
		env.Do(t, "DELETE", dests+"/"+did, owner.Token, nil).Want(t, 404)

		actions := map[string]int{}
		for _, e := range env.Audit(t, owner.Token, org, "tool=forms") {
			actions[e["action"].(string)]++
		}
		if actions["forms.form.created"] != 1 || actions["forms.destination.created"] != 1 || actions["forms.destination.deleted"] != 1 {
			t.Errorf("forms audit actions = %v", actions)
		}

		env.SetTool(t, owner.Token, org, "forms", false)
		off := env.Do(t, "POST", "/v1/auth/switch-org", owner.Token, map[string]string{"org_id": org}).Want(t, 200).Str("access_token")
		env.Do(t, "GET", "/forms/v1/forms", off, nil).Want(t, 403)

		// A deleted workspace takes its forms with it; its old tokens,
		// revoked with it, create none.
		env.Do(t, "DELETE", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
		env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Ghost"}).Want(t, 401)
		env.Do(t, "GET", "/forms/v1/forms/"+id, owner.Token, nil).Want(t, 401)
		env.Do(t, "POST", "/forms/f/"+id, "", map[string]string{"a": "b"}).Want(t, 404)
	})
}

// TestFormSubmissions checks public submissions: form-encoded and JSON,
// the honeypot, _next, mail to destinations with Reply-To the submitter,
// the autoresponder, and the submissions list newest first.
func TestFormSubmissions(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		inbox := "inbox-" + testenv.RandomHex(4) + "@example.com"
		r := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact", "redirectOrigins": []string{"https://example.com"},
			"autoresponder": map[string]any{"enabled": true, "subject": "Thanks for writing", "body": "We got it."}}).Want(t, 200)
		id := r.Str("form.id")
		env.Do(t, "POST", "/forms/v1/forms/"+id+"/destinations", owner.Token, map[string]any{"type": "email", "config": map[string]any{"to": []string{inbox}}}).Want(t, 200)
		formsConfirm(t, env, inbox)

		post := func(body string, contentType string) *http.Response {
			t.Helper()
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := c.Post(env.URL+"/forms/f/"+id, contentType, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		visitor := "visitor-" + testenv.RandomHex(4) + "@example.com"
		form := url.Values{"email": {visitor}, "message": {"Hello there"}}
		if res := post(form.Encode(), "application/x-www-form-urlencoded"); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("form post: %d; want 200 with CORS open", res.StatusCode)
		}
		ms := formsMails(t, env, inbox, "New submission")
		if len(ms) != 1 {
			t.Fatalf("%d submission mails to the destination; want 1", len(ms))
		}
		if m := ms[0]; m.ReplyTo != visitor || !strings.Contains(m.Subject, "Contact") || !strings.Contains(m.Text, "message: Hello there") {
			t.Errorf("destination mail = reply-to %q subject %q text %q", m.ReplyTo, m.Subject, m.Text)
		}
		auto := env.Mail.WaitFor(t, visitor, 5*time.Second)
		if auto.Subject != "Thanks for writing" || !strings.Contains(auto.Text, "We got it.") {
			t.Errorf("autoresponder = %q %q", auto.Subject, auto.Text)
		}

		env.Clock.Advance(time.Second)
		if res := post(`{"name":"Bot","_gotcha":"gotcha"}`, "application/json"); res.StatusCode != 200 {
			t.Fatalf("spam post: %d", res.StatusCode)
		}
		env.Clock.Advance(time.Second)
		res := post(url.Values{"name": {"Ada"}, "_next": {"https://example.com/thanks"}}.Encode(), "application/x-www-form-urlencoded")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "https://example.com/thanks" {
			t.Errorf("_next post: %d to %q; want 303 to the _next URL", res.StatusCode, res.Header.Get("Location"))
		}
		if res := post(url.Values{"_next": {"javascript:alert(1)"}}.Encode(), "application/x-www-form-urlencoded"); res.StatusCode != 400 {
			t.Errorf("_next javascript: %d; want 400", res.StatusCode)
		}
		if res := post("x=1", "application/x-www-form-urlencoded"); res.StatusCode != 200 {
			t.Errorf("plain post: %d", res.StatusCode)
		}
		for _, c := range []struct{ body, contentType string }{
			{"null", "application/json"},
			{"[1,2]", "application/json"},
			{"a=%zz&b=1", "application/x-www-form-urlencoded"},
			{"a=1", "application/xml"},
			{"a=1", ""},
		} {
			if res := post(c.body, c.contentType); res.StatusCode != 400 {
				t.Errorf("post %q as %q: %d; want 400", c.body, c.contentType, res.StatusCode)
			}
		}
		if res := post("topic=hi\r\nbody=a=b\r\n", "text/plain"); res.StatusCode != 200 {
			t.Errorf("text/plain post: %d; want 200", res.StatusCode)
		}
		env.Do(t, "POST", "/forms/f/"+uuid.NewString(), "", map[string]string{"a": "b"}).Want(t, 404)
		env.Do(t, "POST", "/forms/f/not-a-form", "", map[string]string{"a": "b"}).Want(t, 404)

		subs := env.Do(t, "GET", "/forms/v1/forms/"+id+"/submissions", owner.Token, nil).Want(t, 200).Get("submissions").([]any)
		if len(subs) != 5 {
			t.Fatalf("submissions = %v; want 5", subs)
		}
		if plain := subs[0].(map[string]any)["data"].(map[string]any); plain["topic"] != "hi" || plain["body"] != "a=b" {
			t.Errorf("text/plain submission data = %v; want topic hi, body a=b", plain)
		}
		first, spam, nextOne := subs[4].(map[string]any), subs[3].(map[string]any), subs[2].(map[string]any)
		testenv.CheckKeys(t, "submission", first, "id", "data", "spam", "created")
		if first["spam"] != false || first["data"].(map[string]any)["message"] != "Hello there" {
			t.Errorf("oldest submission = %v", first)
		}
		if spam["spam"] != true || spam["data"].(map[string]any)["_gotcha"] != nil {
			t.Errorf("spam submission = %v; want spam true, the honeypot not stored", spam)
		}
		if _, ok := nextOne["data"].(map[string]any)["_next"]; ok {
			t.Errorf("submission kept _next: %v", nextOne)
		}
		// The spam got no mail: the inbox has exactly the four real ones.
		if n := len(formsMails(t, env, inbox, "New submission")); n != 4 {
			t.Errorf("%d mails to the destination; want 4 (not the spam)", n)
		}

		// Disabled in the workspace: the public endpoint refuses too.
		org := env.Do(t, "GET", "/v1/auth/me", owner.Token, nil).Want(t, 200).Str("org.id")
		env.SetTool(t, owner.Token, org, "forms", false)
		if res := post("a=1", "application/x-www-form-urlencoded"); res.StatusCode != 403 {
			t.Errorf("post to a form of a workspace with forms disabled: %d; want 403", res.StatusCode)
		}
	})
}

// TestFormSubmissionsRateLimit checks the per-IP limit on public
// submissions (30, then one per 2 s; docs/decisions.md).
func TestFormSubmissionsRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		id := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		for i := 1; i <= 30; i++ {
			env.Do(t, "POST", "/forms/f/"+id, "", map[string]string{"n": "x"}).Want(t, 200)
		}
		r := env.Do(t, "POST", "/forms/f/"+id, "", map[string]string{"n": "x"}).Want(t, 429)
		if r.Header.Get("Retry-After") == "" || r.Str("error") == "" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("31st submission: headers %v body %s; want Retry-After, CORS open and {error}", r.Header, r.Body)
		}
		env.Clock.Advance(2 * time.Second)
		env.Do(t, "POST", "/forms/f/"+id, "", map[string]string{"n": "x"}).Want(t, 200)
	})
}
