package forms_test

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestFormNextOrigins: a submission's _next is followed only to an https
// origin the form's owner listed in redirectOrigins (set at create or by
// PATCH, validated, normalized); any other _next is ignored and the
// submitter gets the plain {ok: true}, so the public submit endpoint on
// our origin is no open redirector; _next that is no absolute http(s) URL
// (javascript:, //host, a user part) is refused.
func TestFormNextOrigins(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		stranger, _ := env.Team(t)
		for _, bad := range [][]string{{"http://example.com"}, {"https://example.com/thanks"}, {"https://example.com?x=1"},
			{"https://example.com#x"}, {"javascript:alert(1)"}, {"//evil.example"}, {"https://user@example.com"},
			{"https://example.com:99999"}, {"https://"}, {"example.com"}, {""},
			{"https://a.example", "https://b.example", "https://c.example", "https://d.example", "https://e.example", "https://f.example",
				"https://g.example", "https://h.example", "https://i.example", "https://j.example", "https://k.example"}} {
			env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Bad", "redirectOrigins": bad}).Want(t, 400)
		}
		r := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Shop",
			"redirectOrigins": []string{"https://Shop.Example.com:443/", "https://example.com:8443", "https://shop.example.com"}}).Want(t, 200)
		id := r.Str("form.id")
		wantOrigins := []string{"https://shop.example.com", "https://example.com:8443"}
		if got := testenv.Strings(r.Get("form.redirectOrigins")); !slices.Equal(got, wantOrigins) {
			t.Fatalf("redirectOrigins = %v; want %v", got, wantOrigins)
		}
		if got := testenv.Strings(env.Do(t, "GET", "/forms/v1/forms/"+id, owner.Token, nil).Want(t, 200).Get("form.redirectOrigins")); !slices.Equal(got, wantOrigins) {
			t.Fatalf("stored redirectOrigins = %v; want %v", got, wantOrigins)
		}

		submit := func(next string) (int, string, string) {
			t.Helper()
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := c.PostForm(env.URL+"/forms/f/"+id, url.Values{"message": {"hi"}, "_next": {next}})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			return res.StatusCode, res.Header.Get("Location"), string(body)
		}
		for _, next := range []string{"https://shop.example.com/thanks?order=1", "https://SHOP.example.com:443/t", "https://example.com:8443/x"} {
			if status, loc, _ := submit(next); status != http.StatusSeeOther || loc != next {
				t.Errorf("_next %q on a listed origin: %d to %q; want 303 there", next, status, loc)
			}
		}
		for _, next := range []string{"https://evil.example/phish", "https://shop.example.com.evil.example/", "http://shop.example.com/thanks",
			"https://example.com/x", "https://example.com:8444/x"} {
			if status, loc, body := submit(next); status != http.StatusOK || loc != "" || !strings.Contains(body, `"ok":true`) {
				t.Errorf("_next %q on an unlisted origin: %d to %q %s; want 200 {ok: true} and no redirect", next, status, loc, body)
			}
		}
		for _, next := range []string{"javascript:alert(1)", "//evil.example/x", "/relative", "data:text/html,<script>alert(1)</script>",
			"https://shop.example.com@evil.example/"} {
			if status, loc, _ := submit(next); status != http.StatusBadRequest || loc != "" {
				t.Errorf("_next %q: %d to %q; want 400 and no redirect", next, status, loc)
			}
		}
		subs := env.Do(t, "GET", "/forms/v1/forms/"+id+"/submissions", owner.Token, nil).Want(t, 200).Get("submissions").([]any)
		if len(subs) != 8 {
			t.Errorf("%d submissions stored; want 8 (the redirected and the ignored _next alike)", len(subs))
		}

		// The owner changes the list; a stranger cannot.
		path := "/forms/v1/forms/" + id
		env.Do(t, "PATCH", path, stranger.Token, map[string]any{"redirectOrigins": []string{"https://evil.example"}}).Want(t, 404)
		env.Do(t, "PATCH", path, owner.Token, map[string]any{"redirectOrigins": []string{"//evil.example"}}).Want(t, 400)
		if status, loc, _ := submit("https://evil.example/phish"); status != http.StatusOK || loc != "" {
			t.Fatalf("after refused updates: %d to %q; want 200", status, loc)
		}
		p := env.Do(t, "PATCH", path, owner.Token, map[string]any{"redirectOrigins": []string{"https://partner.example"}}).Want(t, 200)
		if got := testenv.Strings(p.Get("form.redirectOrigins")); !slices.Equal(got, []string{"https://partner.example"}) {
			t.Errorf("updated redirectOrigins = %v", got)
		}
		if status, loc, _ := submit("https://partner.example/done"); status != http.StatusSeeOther || loc != "https://partner.example/done" {
			t.Errorf("newly listed origin: %d to %q; want 303", status, loc)
		}
		if status, loc, _ := submit("https://shop.example.com/thanks"); status != http.StatusOK || loc != "" {
			t.Errorf("origin taken off the list: %d to %q; want 200", status, loc)
		}
		env.Do(t, "PATCH", path, owner.Token, map[string]any{"redirectOrigins": []string{}}).Want(t, 200)
		if status, loc, _ := submit("https://partner.example/done"); status != http.StatusOK || loc != "" {
			t.Errorf("emptied list: %d to %q; want 200", status, loc)
		}
		if got := testenv.Strings(env.Do(t, "GET", path, owner.Token, nil).Want(t, 200).Get("form.redirectOrigins")); len(got) != 0 {
			t.Errorf("emptied redirectOrigins = %v", got)
		}
	})
}
