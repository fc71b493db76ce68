package oauth_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// signIn signs browser b in with a password on the hosted page.
func signIn(t testing.TB, b *testenv.Browser, a *testenv.Account) {
	t.Helper()
	p := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/signin"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("sign-in status = %d, body %s; want 303", p.Status, p.Body)
	}
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// hiddenFields returns the hidden inputs of a page's forms.
func hiddenFields(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// consentAt opens an authorization URL in signed-in browser b, approves
// it for orgID and returns the redirect to the client.
func consentAt(t testing.TB, b *testenv.Browser, authURL, orgID string) *url.URL {
	t.Helper()
	p := b.Get(t, authURL)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `name="org_id"`) {
		t.Fatalf("authorize page status = %d, body %s; want the consent page", p.Status, p.Body)
	}
	form := hiddenFields(p.Body)
	form.Set("decision", "approve")
	form.Set("org_id", orgID)
	p = b.Post(t, "/oauth/authorize", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("consent status = %d, body %s; want 303", p.Status, p.Body)
	}
	u, err := url.Parse(p.Location())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// registerClient registers a public client and returns its client_id.
func registerClient(t testing.TB, env *testenv.Env, md map[string]any) string {
	t.Helper()
	r := env.Do(t, "POST", "/oauth/register", "", md).Want(t, http.StatusCreated)
	id := r.Str("client_id")
	if id == "" {
		t.Fatalf("registration without client_id: %s", r.Body)
	}
	return id
}

// tokenPost posts a form to the token endpoint.
func tokenPost(t testing.TB, env *testenv.Env, form url.Values) *testenv.Resp {
	t.Helper()
	return postForm(t, env, "/oauth/token", form)
}

// postForm posts form, url-encoded, to path.
func postForm(t testing.TB, env *testenv.Env, path string, form url.Values) *testenv.Resp {
	t.Helper()
	return env.PostForm(t, path, form)
}

// wantOAuthError checks an RFC 6749 §5.2 error answer.
func wantOAuthError(t testing.TB, r *testenv.Resp, status int, code string) {
	t.Helper()
	if r.Status != status || r.Str("error") != code {
		t.Fatalf("got %d %s; want %d with error %q", r.Status, r.Body, status, code)
	}
	d, ok := r.JSON()["error_description"].(string)
	if !ok {
		t.Fatalf("error without error_description: %s", r.Body)
	}
	// RFC 6749 §5.2: %x20-21 / %x23-5B / %x5D-7E.
	for _, c := range d {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			t.Fatalf("error_description %q has %q, outside RFC 6749 §5.2", d, c)
		}
	}
}
