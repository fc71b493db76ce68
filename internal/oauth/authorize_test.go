package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestAuthorizeRequests(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"client_name": "Tool", "redirect_uris": []string{redirect, "https://app.example.com/cb?x=1"}})
		challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
		q := func(over map[string]string) string {
			v := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"},
				"code_challenge": {challenge}, "code_challenge_method": {"S256"}}
			for k, val := range over {
				if val == "" {
					v.Del(k)
				} else {
					v.Set(k, val)
				}
			}
			return "/oauth/authorize?" + v.Encode()
		}
		anon := env.NewBrowser(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)

		t.Run("error page, never a redirect", func(t *testing.T) {
			for name, u := range map[string]string{
				"unknown client":       q(map[string]string{"client_id": "00000000-0000-4000-8000-000000000000"}),
				"no client":            q(map[string]string{"client_id": ""}),
				"unregistered path":    q(map[string]string{"redirect_uri": "http://127.0.0.1:53682/other"}),
				"unregistered host":    q(map[string]string{"redirect_uri": "https://evil.example.com/cb"}),
				"changed query":        q(map[string]string{"redirect_uri": "https://app.example.com/cb?x=2"}),
				"no redirect, several": q(map[string]string{"redirect_uri": ""}),
			} {
				p := b.Get(t, u)
				if p.Status != 400 || p.Location() != "" || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("%s: status %d location %q; want a 400 error page", name, p.Status, p.Location())
				}
			}
		})
		t.Run("redirected errors keep the state", func(t *testing.T) {
			for name, tc := range map[string]struct {
				over map[string]string
				code string
			}{
				"no PKCE":       {map[string]string{"code_challenge": "", "code_challenge_method": ""}, "invalid_request"},
				"plain PKCE":    {map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
				"no method":     {map[string]string{"code_challenge_method": ""}, "invalid_request"},
				"implicit":      {map[string]string{"response_type": "token"}, "unsupported_response_type"},
				"foreign audit": {map[string]string{"resource": "https://elsewhere.example.com/"}, "invalid_target"},
			} {
				p := b.Get(t, q(tc.over))
				loc, _ := url.Parse(p.Location())
				if p.Status != http.StatusSeeOther || loc.Query().Get("error") != tc.code || loc.Query().Get("state") != "xyz" || loc.Query().Get("iss") != env.URL {
					t.Fatalf("%s: status %d location %q; want a redirect with error=%s", name, p.Status, p.Location(), tc.code)
				}
			}
		})
		t.Run("the consent form's post: redirected errors keep the state, untrusted ones stay on the page", func(t *testing.T) {
			// The POST is validated again from its fields (RFC 6749
			// §4.1.2.1): a request the client may hear about goes back to
			// it; one whose client or redirect URI cannot be trusted is our
			// page, never a redirect.
			post := func(over map[string]string) *testenv.Page {
				u, _ := url.Parse(q(over))
				form := u.Query()
				form.Set("decision", "approve")
				form.Set("org_id", a.OrgID)
				return b.Post(t, "/oauth/authorize", form)
			}
			p := post(map[string]string{"code_challenge": "", "code_challenge_method": ""})
			loc, _ := url.Parse(p.Location())
			if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), redirect+"?") || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("state") != "xyz" {
				t.Fatalf("no PKCE posted: status %d location %q; want a redirect to the client with error=invalid_request", p.Status, p.Location())
			}
			for name, over := range map[string]map[string]string{
				"unregistered host": {"redirect_uri": "https://evil.example.com/cb"},
				"unknown client":    {"client_id": "00000000-0000-4000-8000-000000000000"},
			} {
				p := post(over)
				if p.Status != 400 || p.Location() != "" || !strings.Contains(p.Body, "This sign-in request cannot go on") {
					t.Fatalf("%s posted: status %d location %q; want the 400 error page", name, p.Status, p.Location())
				}
			}
		})
		t.Run("before sign-in, errors show the error page, not a redirect", func(t *testing.T) {
			// RFC 9700 §4.11.2: a self-registered client must not turn
			// Gatehouse into an open redirector to its redirect URI.
			for name, over := range map[string]map[string]string{
				"no PKCE":         {"code_challenge": "", "code_challenge_method": ""},
				"plain PKCE":      {"code_challenge_method": "plain"},
				"implicit":        {"response_type": "token"},
				"no responsetype": {"response_type": ""},
				"foreign audit":   {"resource": "https://elsewhere.example.com/"},
			} {
				p := env.NewBrowser(t).Get(t, q(over))
				if p.Status != 400 || p.Location() != "" || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("%s: status %d location %q; want a 400 error page", name, p.Status, p.Location())
				}
				form, _ := url.Parse(q(over))
				if p := env.NewBrowser(t).Post(t, "/oauth/authorize", form.Query()); p.Status != 400 || p.Location() != "" {
					t.Fatalf("%s posted: status %d location %q; want a 400 error page", name, p.Status, p.Location())
				}
			}
			// The page names the parameter as the client sent it.
			if p := env.NewBrowser(t).Get(t, q(map[string]string{"code_challenge_method": "plain"})); !strings.Contains(p.Body, "code_challenge_method must be S256.") {
				t.Errorf("plain PKCE page: %s; want it to name code_challenge_method as sent", p.Body)
			}
		})
		t.Run("loopback redirect on any port", func(t *testing.T) {
			p := b.Get(t, q(map[string]string{"redirect_uri": "http://127.0.0.1:40000/callback"}))
			if p.Status != 200 || !strings.Contains(p.Body, "Allow") {
				t.Fatalf("status %d; want the consent page", p.Status)
			}
		})
		t.Run("anonymous users sign in first and come back", func(t *testing.T) {
			p := anon.Get(t, q(nil))
			if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/signin?") {
				t.Fatalf("status %d location %q; want the sign-in page", p.Status, p.Location())
			}
			form := url.Values{"email": {a.Email}, "password": {a.Password}}
			loc, _ := url.Parse(p.Location())
			form.Set("next", loc.Query().Get("next"))
			s := anon.Post(t, "/signin", form)
			if s.Status != http.StatusSeeOther || s.Location() != q(nil) {
				t.Fatalf("after sign-in: status %d location %q; want back to %q", s.Status, s.Location(), q(nil))
			}
			bad := anon.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {"wrong-password"}})
			if bad.Status != 401 || !strings.Contains(bad.Body, "Invalid email or password") {
				t.Fatalf("wrong password: status %d", bad.Status)
			}
		})
		t.Run("deny", func(t *testing.T) {
			form := hiddenFields(b.Get(t, q(nil)).Body)
			form.Set("decision", "deny")
			p := b.Post(t, "/oauth/authorize", form)
			loc, _ := url.Parse(p.Location())
			if p.Status != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "xyz" {
				t.Fatalf("deny: status %d location %q", p.Status, p.Location())
			}
		})
		t.Run("a workspace the user is not in", func(t *testing.T) {
			other := env.Register(t)
			form := hiddenFields(b.Get(t, q(nil)).Body)
			form.Set("decision", "approve")
			form.Set("org_id", other.OrgID)
			if p := b.Post(t, "/oauth/authorize", form); p.Status != 400 || p.Location() != "" {
				t.Fatalf("foreign org: status %d location %q; want the consent page again with an error", p.Status, p.Location())
			}
		})
		t.Run("cross-site form posts are refused", func(t *testing.T) {
			form := hiddenFields(b.Get(t, q(nil)).Body)
			form.Set("decision", "approve")
			form.Set("org_id", a.OrgID)
			req, _ := http.NewRequest("POST", env.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			res, err := b.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Fatalf("cross-site POST status %d; want 403", res.StatusCode)
			}
		})
	})
}
