package sso_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// post sends a form from b with extra headers, cookies kept, and reads the
// answer.
func (b *browser) post(t *testing.T, raw string, form url.Values, headers map[string]string) (*http.Response, string) {
	t.Helper()
	resp := b.postForm(t, raw, form, headers)
	text, _ := io.ReadAll(resp.Body)
	return resp, string(text)
}

// page is the text of the page at path in b.
func page(t *testing.T, env *testenv.Env, b *browser, path string) string {
	t.Helper()
	resp := b.get(t, env.URL+path)
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s answered %d: %s", path, resp.StatusCode, text)
	}
	return string(text)
}

// TestIdentitiesPage: the account's linked sign-ins page lists the
// identity and unlinks it only after its confirmation step; a form sent
// from another site changes nothing, and the last way to sign in stays.
func TestIdentitiesPage(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		email := "p-" + testenv.RandomHex(3) + "@example.com"
		_, b := socialIn(t, env, idp, "acme", map[string]any{"sub": "p-" + testenv.RandomHex(3), "email": email, "email_verified": true})
		text := page(t, env, b, "/account/identities")
		if !strings.Contains(text, "acme ID") || !strings.Contains(text, email) {
			t.Fatalf("the page does not show the acme identity of %s:\n%s", email, text)
		}
		id := identities(t, env, accessOf(t, env, b))[0]["id"].(string)
		form := url.Values{"id": {id}, "confirm": {"yes"}}
		if resp, _ := b.post(t, env.URL+"/account/identities/unlink", form, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site unlink answered %d; want 403", resp.StatusCode)
		}
		// No password, no passkey: refused even when confirmed.
		if resp, text := b.post(t, env.URL+"/account/identities/unlink", form, nil); resp.StatusCode != http.StatusConflict || !strings.Contains(text, "last way") {
			t.Errorf("unlink of the last identity answered %d; want 409 naming the rule", resp.StatusCode)
		}
		// With a password: a direct post asks first, the confirmed one unlinks.
		env.Call(t, "POST", "/v1/me/password", accessOf(t, env, b), map[string]string{"new_password": "a fine long passphrase 42"}).Want(t, 200)
		if resp, text := b.post(t, env.URL+"/account/identities/unlink", url.Values{"id": {id}}, nil); resp.StatusCode != http.StatusOK || !strings.Contains(text, "Unlink acme ID") {
			t.Errorf("unconfirmed unlink answered %d; want the confirmation step", resp.StatusCode)
		}
		if n := len(identities(t, env, accessOf(t, env, b))); n != 1 {
			t.Fatalf("%d identities before confirming; want 1", n)
		}
		if resp, _ := b.post(t, env.URL+"/account/identities/unlink", form, nil); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("confirmed unlink answered %d; want 303", resp.StatusCode)
		}
		if n := len(identities(t, env, accessOf(t, env, b))); n != 0 {
			t.Errorf("%d identities after unlinking; want none", n)
		}
	})
}
