package oauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// toolOp is one operation of a tool API as the matrix calls it: the tool
// whose scopes it needs, read or write, and a request that passes every
// gate to an answer of the tool itself (okStatus).
type toolOp struct {
	tool, access, method, path string
	body                       map[string]any
	okStatus                   int
}

// toolOps are a read and a write of every tool API, the webhooks of Links
// and Sign included (they count as their tool).
var toolOps = []toolOp{
	{"tasks", "read", "GET", "/tasks/v1/issues/00000000-0000-4000-8000-000000000000", nil, 404},
	{"tasks", "write", "POST", "/tasks/v1/issues", map[string]any{}, 400},
	{"links", "read", "GET", "/links/v1/links", nil, 200},
	{"links", "write", "POST", "/links/v1/links", map[string]any{}, 400},
	{"links", "read", "GET", "/links/v1/webhooks", nil, 200},
	{"links", "write", "POST", "/links/v1/webhooks", map[string]any{}, 400},
	{"forms", "read", "GET", "/forms/v1/forms", nil, 200},
	{"forms", "write", "POST", "/forms/v1/forms", map[string]any{}, 400},
	{"sign", "read", "GET", "/sign/v1/documents", nil, 200},
	{"sign", "write", "POST", "/sign/v1/documents/00000000-0000-4000-8000-000000000000/void", map[string]any{}, 404},
	{"sign", "read", "GET", "/sign/v1/webhooks", nil, 200},
	{"sign", "write", "POST", "/sign/v1/webhooks", map[string]any{}, 400},
}

// grantToken runs the device flow for client with resource and scope (each
// may be empty), approves it in signed-in browser b for orgID, and returns
// the token endpoint's answer.
func grantToken(t testing.TB, env *testenv.Env, b *testenv.Browser, client, orgID, resource, scope string) *testenv.Resp {
	t.Helper()
	form := url.Values{"client_id": {client}}
	if resource != "" {
		form.Set("resource", resource)
	}
	if scope != "" {
		form.Set("scope", scope)
	}
	da := postForm(t, env, "/oauth/device/authorization", form).Want(t, http.StatusOK)
	if p := decideDevice(t, b, da.Str("verification_uri_complete"), "approve", orgID); p.Status != 200 {
		t.Fatalf("approve: %d %s", p.Status, p.Body)
	}
	return tokenPost(t, env, url.Values{"grant_type": {deviceGrant}, "device_code": {da.Str("device_code")}, "client_id": {client}}).Want(t, http.StatusOK)
}

// wantChallenge checks a refusal's status and its WWW-Authenticate: the
// error code, the scope named (when scope is set) and the resource
// metadata of tool.
func wantChallenge(t testing.TB, env *testenv.Env, r *testenv.Resp, status int, code, scope, tool string) {
	t.Helper()
	h := r.Header.Get("WWW-Authenticate")
	if r.Status != status || !strings.HasPrefix(h, `Bearer error="`+code+`", error_description="`) ||
		!strings.HasSuffix(h, `resource_metadata="`+env.URL+`/.well-known/oauth-protected-resource/`+tool+`"`) || r.Str("error") == "" {
		t.Fatalf("got %d, WWW-Authenticate %q, body %s; want %d %s with the %s resource metadata", r.Status, h, r.Body, status, code, tool)
	}
	if scope != "" && !strings.Contains(h, `, scope="`+scope+`", `) {
		t.Fatalf("WWW-Authenticate %q does not name the scope %s", h, scope)
	}
}

// TestAudienceScopeMatrix: over a read and a write of every tool API
// (webhooks included), a token bound to that tool, bound to another tool
// or unbound (RFC 8707), each with no scope, the tool's read scope or its
// write scope: a token for another tool is refused with 401 invalid_token
// pointing at the tool's resource metadata; a token without tool scopes
// does everything (today's behaviour); a scoped one only what its scope
// names, else 403 insufficient_scope naming the scope the operation needs
// (write does not imply read). On the accounts API a bound or tool-scoped
// token is refused (401, 403) but verifies.
func TestAudienceScopeMatrix(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Matrix", [2]string{a.UserID, "owner"})
		client := registerClient(t, env, map[string]any{"client_name": "Matrix", "grant_types": []string{deviceGrant, "refresh_token"}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		tokens := map[[2]string]string{}
		tokenFor := func(resource, scope string) string {
			k := [2]string{resource, scope}
			if tokens[k] == "" {
				tokens[k] = grantToken(t, env, b, client, team, resource, scope).Str("access_token")
			}
			return tokens[k]
		}
		other := map[string]string{"tasks": "forms", "forms": "tasks", "links": "sign", "sign": "links"}
		for _, op := range toolOps {
			for _, aud := range []string{"bound", "other", "unbound"} {
				for _, sc := range []string{"", "read", "write"} {
					resource := map[string]string{"bound": env.URL + "/" + op.tool, "other": env.URL + "/" + other[op.tool], "unbound": ""}[aud]
					scope := ""
					if sc != "" {
						scope = op.tool + ":" + sc
					}
					name := op.method + " " + op.path + " " + aud + " scope=" + scope
					t.Run(name, func(t *testing.T) {
						r := env.Do(t, op.method, op.path, tokenFor(resource, scope), op.body)
						switch {
						case aud == "other":
							wantChallenge(t, env, r, 401, "invalid_token", "", op.tool)
						case sc == "" || sc == op.access:
							if r.Status != op.okStatus {
								t.Fatalf("got %d %s; want %d (the tool's own answer)", r.Status, r.Body, op.okStatus)
							}
						default:
							wantChallenge(t, env, r, 403, "insufficient_scope", op.tool+":"+op.access, op.tool)
						}
					})
				}
			}
		}
		// The accounts API: only a token meant for it (unbound, no tool
		// scope, or bound to Gatehouse itself) reaches it; every valid token
		// verifies (a resource server outside asks GET /v1/auth/verify).
		for _, c := range []struct {
			name, resource, scope string
			want                  int
		}{
			{"unbound", "", "", 200},
			{"bound to Gatehouse", env.URL, "", 200},
			{"bound to tasks", env.URL + "/tasks", "", 401},
			{"tool-scoped", "", "tasks:read", 403},
			{"OIDC scopes only", "", "offline_access", 200},
		} {
			t.Run("accounts API "+c.name, func(t *testing.T) {
				tok := tokenFor(c.resource, c.scope)
				env.Do(t, "GET", "/v1/me/orgs", tok, nil).Want(t, c.want)
				env.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 200)
			})
		}
	})
}

// TestTasksTokenRefusedByForms is the reported bug: a token requested
// with resource={api_url}/tasks was accepted by /forms. It is refused
// there (401 invalid_token, the Forms resource metadata named), and
// accepted by Tasks, whatever URL under /tasks named it (as the MCP SDK
// does with the URL it was sent to).
func TestTasksTokenRefusedByForms(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Bugged", [2]string{a.UserID, "owner"})
		client := registerClient(t, env, map[string]any{"grant_types": []string{deviceGrant}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		for _, resource := range []string{env.URL + "/tasks", env.URL + "/tasks/", env.URL + "/tasks/v1/issues"} {
			tok := grantToken(t, env, b, client, team, resource, "").Str("access_token")
			wantChallenge(t, env, env.Do(t, "GET", "/forms/v1/forms", tok, nil), 401, "invalid_token", "", "forms")
			env.Do(t, "GET", "/tasks/v1/issues/00000000-0000-4000-8000-000000000000", tok, nil).Want(t, 404)
		}
		// A resource that reads as another tool than it binds to, or names
		// no tool, is refused.
		for _, resource := range []string{env.URL + "/tasks/../forms", env.URL + "/tasks/%2e%2e/forms", env.URL + "/tasks?x=1", env.URL + "/mail", "https://elsewhere.example/tasks"} {
			wantOAuthError(t, postForm(t, env, "/oauth/device/authorization", url.Values{"client_id": {client}, "resource": {resource}}), 400, "invalid_target")
		}
	})
}

// s256 is the PKCE S256 challenge of verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// codeToken runs the authorization code flow for client with resource
// and scope in signed-in browser b, approving orgID, and returns the
// token endpoint's answer.
func codeToken(t testing.TB, env *testenv.Env, b *testenv.Browser, client, orgID, resource, scope string) *testenv.Resp {
	t.Helper()
	verifier := strings.Repeat("v", 43)
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "code_challenge": {s256(verifier)},
		"code_challenge_method": {"S256"}, "state": {"s"}}
	if resource != "" {
		q.Set("resource", resource)
	}
	if scope != "" {
		q.Set("scope", scope)
	}
	back := consentAt(t, b, "/oauth/authorize?"+q.Encode(), orgID)
	return tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "client_id": {client},
		"code_verifier": {verifier}, "redirect_uri": {redirect}}).Want(t, http.StatusOK)
}

// TestScopeStepUp is the MCP step-up: a read-only token's write is
// answered 403 insufficient_scope naming tasks:write; the client
// re-authorizes with the union of its scopes and the challenged one, and
// the new token both reads and writes. The token answer names the scope.
func TestScopeStepUp(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Step", [2]string{a.UserID, "owner"})
		client := registerClient(t, env, map[string]any{"client_name": "MCP", "redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		resource := env.URL + "/tasks"
		read := codeToken(t, env, b, client, team, resource, "tasks:read")
		if read.Str("scope") != "tasks:read" || testenv.Claims(t, read.Str("access_token"))["scope"] != "tasks:read" {
			t.Fatalf("token answer %s; want scope tasks:read in it and in the token", read.Body)
		}
		env.Do(t, "GET", "/tasks/v1/issues/00000000-0000-4000-8000-000000000000", read.Str("access_token"), nil).Want(t, 404)
		refused := env.Do(t, "POST", "/tasks/v1/issues", read.Str("access_token"), map[string]any{})
		wantChallenge(t, env, refused, 403, "insufficient_scope", "tasks:write", "tasks")

		union := codeToken(t, env, b, client, team, resource, "tasks:read tasks:write")
		tok := union.Str("access_token")
		if union.Str("scope") != "tasks:read tasks:write" {
			t.Fatalf("union token answer %s", union.Body)
		}
		env.Do(t, "GET", "/tasks/v1/issues/00000000-0000-4000-8000-000000000000", tok, nil).Want(t, 404)
		env.Do(t, "POST", "/tasks/v1/issues", tok, map[string]any{}).Want(t, 400)
		// Still bound to Tasks: nothing more.
		wantChallenge(t, env, env.Do(t, "GET", "/links/v1/links", tok, nil), 401, "invalid_token", "", "links")
	})
}

// TestRefreshCannotWidenScope: a refresh may narrow its access token's
// scope but never widen it (RFC 6749 §6): a scope the grant does not hold
// (a tool's write, openid) is invalid_scope and rotates nothing; a
// narrower scope gives a token limited to it, and the next refresh without
// scope is back to the grant's. Scope smuggling through refresh fails.
func TestRefreshCannotWidenScope(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Narrow", [2]string{a.UserID, "owner"})
		client := registerClient(t, env, map[string]any{"grant_types": []string{deviceGrant, "refresh_token"}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		refresh := func(rt, scope string) *testenv.Resp {
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}}
			if scope != "" {
				form.Set("scope", scope)
			}
			return tokenPost(t, env, form)
		}
		read := grantToken(t, env, b, client, team, "", "tasks:read")
		for _, widen := range []string{"tasks:read tasks:write", "tasks:write", "openid", "links:read", "nonsense"} {
			wantOAuthError(t, refresh(read.Str("refresh_token"), widen), 400, "invalid_scope")
		}
		// Nothing rotated: the same refresh token still works, with the
		// grant's scope.
		again := refresh(read.Str("refresh_token"), "").Want(t, 200)
		if c := testenv.Claims(t, again.Str("access_token")); c["scope"] != "tasks:read" || again.Str("scope") != "tasks:read" {
			t.Fatalf("refreshed %s, claims %v; want scope tasks:read", again.Body, c)
		}
		wantChallenge(t, env, env.Do(t, "POST", "/tasks/v1/issues", again.Str("access_token"), map[string]any{}), 403, "insufficient_scope", "tasks:write", "tasks")

		// An unscoped grant cannot gain a scope by refresh either.
		plain := grantToken(t, env, b, client, team, "", "")
		wantOAuthError(t, refresh(plain.Str("refresh_token"), "openid"), 400, "invalid_scope")

		both := grantToken(t, env, b, client, team, "", "tasks:read tasks:write offline_access")
		narrow := refresh(both.Str("refresh_token"), "tasks:read").Want(t, 200)
		if narrow.Str("scope") != "tasks:read" {
			t.Fatalf("narrowed answer %s; want scope tasks:read", narrow.Body)
		}
		wantChallenge(t, env, env.Do(t, "POST", "/tasks/v1/issues", narrow.Str("access_token"), map[string]any{}), 403, "insufficient_scope", "tasks:write", "tasks")
		back := refresh(narrow.Str("refresh_token"), "").Want(t, 200)
		if back.Str("scope") != "tasks:read tasks:write offline_access" {
			t.Fatalf("refresh after narrowing %s; want the grant's scope back", back.Body)
		}
		env.Do(t, "POST", "/tasks/v1/issues", back.Str("access_token"), map[string]any{}).Want(t, 400)
	})
}

// TestInvalidScope: unknown scope words are invalid_scope at the
// authorization endpoint (redirected once signed in), at device
// authorization; a client registered with a narrow scope cannot ask for
// more, and asking for nothing gets its registered scope, not an
// unscoped token (RFC 6749 §3.3).
func TestInvalidScope(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Scopes", [2]string{a.UserID, "owner"})
		client := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", deviceGrant, "refresh_token"}})
		narrow := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "scope": "tasks:read mcp:tools",
			"grant_types": []string{"authorization_code", deviceGrant, "refresh_token"}})
		authorize := func(client, scope string) string {
			return "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
				"code_challenge": {s256(strings.Repeat("v", 43))}, "code_challenge_method": {"S256"}, "state": {"s"}, "scope": {scope}}.Encode()
		}
		// Before sign-in a self-registered client's errors are a page, not
		// a redirect (RFC 9700 §4.11.2).
		anon := env.NewBrowser(t)
		if p := anon.Get(t, authorize(client, "tasks:delete")); p.Status != 400 || !strings.Contains(p.Body, "nknown scope tasks:delete") {
			t.Fatalf("unknown scope before sign-in: %d %s", p.Status, p.Body)
		}
		b := env.NewBrowser(t)
		signIn(t, b, a)
		for _, c := range []struct{ client, scope, says string }{
			{client, "tasks:delete", "unknown scope"},
			{client, "openid admin", "unknown scope"},
			{client, "TASKS:READ", "unknown scope"},
			{narrow, "tasks:write", "not among the scopes the client registered"},
			{narrow, "tasks:read links:read", "not among the scopes the client registered"},
		} {
			p := b.Get(t, authorize(c.client, c.scope))
			u, err := url.Parse(p.Location())
			if p.Status != http.StatusFound && p.Status != http.StatusSeeOther || err != nil || u.Query().Get("error") != "invalid_scope" ||
				!strings.Contains(u.Query().Get("error_description"), c.says) || u.Query().Get("state") != "s" {
				t.Fatalf("authorize scope %q: %d %q; want a redirect with invalid_scope", c.scope, p.Status, p.Location())
			}
		}
		for _, c := range []struct{ client, scope string }{{client, "tasks:delete"}, {client, "profile admin"}, {narrow, "tasks:write"}} {
			wantOAuthError(t, postForm(t, env, "/oauth/device/authorization", url.Values{"client_id": {c.client}, "scope": {c.scope}}), 400, "invalid_scope")
		}
		// The narrow client asking for nothing gets its registered scope
		// (the words Gatehouse knows of it), so it stays read-only.
		for _, tok := range []*testenv.Resp{codeToken(t, env, b, narrow, team, env.URL+"/tasks", ""), grantToken(t, env, b, narrow, team, "", "")} {
			if tok.Str("scope") != "tasks:read" {
				t.Fatalf("narrow client without scope got %s; want tasks:read", tok.Body)
			}
			wantChallenge(t, env, env.Do(t, "POST", "/tasks/v1/issues", tok.Str("access_token"), map[string]any{}), 403, "insufficient_scope", "tasks:write", "tasks")
		}
		// Within its registration it gets what it asks.
		if tok := codeToken(t, env, b, narrow, team, env.URL+"/tasks", "tasks:read"); tok.Str("scope") != "tasks:read" {
			t.Fatalf("narrow client: %s", tok.Body)
		}
	})
}
