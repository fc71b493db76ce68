package oauth_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestDiscoveryMetadata(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := env.Do(t, "GET", "/.well-known/oauth-authorization-server", "", nil).Want(t, 200)
		if r.Str("issuer") != env.URL {
			t.Fatalf("issuer = %q; want exactly %q", r.Str("issuer"), env.URL)
		}
		if r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("no CORS header on discovery")
		}
		testenv.Golden(t, "authorization-server.json", bytes.ReplaceAll(r.Body, []byte(env.URL), []byte("{issuer}")))
		// OpenID Connect Discovery: the same document, issuer exactly the
		// base URL, readable cross-origin.
		oidc := env.Do(t, "GET", "/.well-known/openid-configuration", "", nil).Want(t, 200)
		if !bytes.Equal(oidc.Body, r.Body) || oidc.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("openid-configuration differs from the RFC 8414 document or has no CORS: %s", oidc.Body)
		}
		env.Do(t, "OPTIONS", "/.well-known/openid-configuration", "", nil).Want(t, http.StatusNoContent)
		env.Do(t, "OPTIONS", "/oauth/userinfo", "", nil).Want(t, http.StatusNoContent)

		prm := env.Do(t, "GET", "/.well-known/oauth-protected-resource", "", nil).Want(t, 200)
		testenv.Golden(t, "protected-resource.json", bytes.ReplaceAll(prm.Body, []byte(env.URL), []byte("{issuer}")))
		sub := env.Do(t, "GET", "/.well-known/oauth-protected-resource/tasks/v1/issues", "", nil).Want(t, 200)
		if sub.Str("resource") != env.URL+"/tasks/v1/issues" || sub.Get("authorization_servers").([]any)[0] != env.URL {
			t.Fatalf("path-suffixed metadata = %s", sub.Body)
		}
		env.Do(t, "GET", "/.well-known/oauth-protected-resource/nope", "", nil).Want(t, 404)
	})
}

func TestToolAPIChallenge(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := env.Do(t, "GET", "/tasks/v1/issues", "", nil).Want(t, http.StatusUnauthorized)
		want := `Bearer resource_metadata="` + env.URL + `/.well-known/oauth-protected-resource/tasks"`
		if got := r.Header.Get("WWW-Authenticate"); got != want {
			t.Fatalf("WWW-Authenticate = %q; want %q", got, want)
		}
		if r.Str("error") == "" {
			t.Fatalf("401 body = %s; want {error}", r.Body)
		}
		bad := env.Do(t, "GET", "/crm/v1/contacts", "svc_u_notatoken", nil).Want(t, http.StatusUnauthorized)
		if got := bad.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) || !strings.Contains(got, "oauth-protected-resource/crm") {
			t.Fatalf("WWW-Authenticate = %q", got)
		}
		a := env.Register(t)
		env.Do(t, "POST", "/notes/v1/notes", a.Access, map[string]any{}).Want(t, http.StatusNotFound)
		if _, err := env.Store.DB().Exec(`INSERT INTO org_tools (org_id, tool, enabled) VALUES ($1, 'sign', FALSE)`, a.OrgID); err != nil {
			t.Fatal(err)
		}
		login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		off := env.Do(t, "GET", "/sign/v1/documents", login.Str("access_token"), nil).Want(t, http.StatusForbidden)
		if !strings.Contains(off.Str("error"), "sign") {
			t.Fatalf("403 error = %q; want it to name the tool", off.Str("error"))
		}
	})
}
