package workspace_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// appBody is a valid application registration.
func appBody(method string) map[string]any {
	return map[string]any{"client_name": "Acme Portal", "redirect_uris": []string{"https://portal.example.com/callback"},
		"token_endpoint_auth_method": method, "scope": "openid email offline_access"}
}

// TestWsApplicationsCRUD: an owner registers, reads, lists, edits, rotates
// and deletes applications; the secret is answered once (create and
// rotate) and never in GET or list; each change is audited.
func TestWsApplicationsCRUD(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		base := "/v1/orgs/" + w.Org + "/applications"
		r := env.Do(t, "POST", base, w.Owner.Access, appBody("client_secret_basic")).Want(t, 200)
		app := r.Obj(t, "application")
		id, clientID, secret := app["id"].(string), app["client_id"].(string), r.Str("client_secret")
		if !testenv.IsUUID(id) || clientID != "app_"+id || !strings.HasPrefix(secret, "gha_") || len(secret) < 40 {
			t.Fatalf("created %s", r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control = %q; want no-store on an answer with a secret", r.Header.Get("Cache-Control"))
		}
		if app["scope"] != "openid email offline_access" || app["id_token_signed_response_alg"] != "RS256" || app["first_party"] != false {
			t.Errorf("defaults: %v", app)
		}
		// Public and private_key_jwt applications have no secret.
		pub := env.Do(t, "POST", base, w.Admin.Access, map[string]any{"client_name": "CLI", "redirect_uris": []string{"http://127.0.0.1/cb"},
			"token_endpoint_auth_method": "none"}).Want(t, 200)
		if _, ok := pub.JSON()["client_secret"]; ok {
			t.Errorf("a public application got a secret: %s", pub.Body)
		}
		pubID := pub.Str("application.id")

		for _, path := range []string{base, base + "/" + id} {
			got := env.Do(t, "GET", path, w.Admin.Access, nil).Want(t, 200)
			if strings.Contains(string(got.Body), secret) || strings.Contains(string(got.Body), "secret\"") {
				t.Errorf("GET %s shows a secret: %s", path, got.Body)
			}
		}
		if list := env.Do(t, "GET", base, w.Owner.Access, nil).Want(t, 200).List(t, "applications"); len(list) != 2 || list[0]["id"] != id {
			t.Errorf("list = %v", list)
		}

		p := env.Do(t, "PATCH", base+"/"+id, w.Admin.Access, map[string]any{"client_name": "Acme Portal 2", "first_party": true,
			"token_endpoint_auth_method": "client_secret_post", "post_logout_redirect_uris": []string{"https://portal.example.com/bye"}}).Want(t, 200)
		if p.Str("application.client_name") != "Acme Portal 2" || p.Get("application.first_party") != true ||
			p.Str("application.token_endpoint_auth_method") != "client_secret_post" {
			t.Errorf("patched %s", p.Body)
		}
		// From a secret method to none is refused: it would leave a public
		// client where a confidential one was registered.
		env.Do(t, "PATCH", base+"/"+id, w.Owner.Access, map[string]any{"token_endpoint_auth_method": "none"}).Want(t, 400)

		rot := env.Do(t, "POST", base+"/"+id+"/secret", w.Owner.Access, map[string]any{"grace_seconds": 3600}).Want(t, 200)
		if s2 := rot.Str("client_secret"); s2 == "" || s2 == secret {
			t.Errorf("rotated secret %q", s2)
		}
		if rot.Str("application.previous_secret_expires_at") == "" {
			t.Errorf("rotation with grace: %s", rot.Body)
		}
		env.Do(t, "POST", base+"/"+pubID+"/secret", w.Owner.Access, nil).Want(t, 409)
		for _, g := range []any{-1, 604801, "x"} {
			env.Do(t, "POST", base+"/"+id+"/secret", w.Owner.Access, map[string]any{"grace_seconds": g}).Want(t, 400)
		}
		env.Do(t, "DELETE", base+"/"+id, w.Owner.Access, nil).Want(t, 200)
		env.Do(t, "GET", base+"/"+id, w.Owner.Access, nil).Want(t, 404)
		env.Do(t, "DELETE", base+"/"+id, w.Owner.Access, nil).Want(t, 404)

		actions := map[string]bool{}
		for _, e := range env.Audit(t, w.Owner.Access, w.Org, "") {
			actions[e["action"].(string)] = true
		}
		for _, a := range []string{"identity.application.created", "identity.application.updated", "identity.application.secret_rotated", "identity.application.deleted"} {
			if !actions[a] {
				t.Errorf("audit log lacks %s: %v", a, actions)
			}
		}
	})
}

// TestWsApplicationsPermissions: owners and admins of the team org only;
// a billing or member role 403; a stranger, another workspace's admin and
// another workspace's key 404; a personal workspace 403; a key (not a full
// session) may not register, rotate or delete.
func TestWsApplicationsPermissions(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		base := "/v1/orgs/" + w.Org + "/applications"
		id := env.Do(t, "POST", base, w.Owner.Access, appBody("client_secret_basic")).Want(t, 200).Str("application.id")
		one := base + "/" + id
		other := env.NewWorld(t) // another workspace; its owner and admin are strangers here
		adminKey := env.Exchange(t, env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Admin bot", "role": "admin"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		memberKey := env.Exchange(t, env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Bot", "role": "member"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		otherKey := env.Exchange(t, env.CreateOrgKey(t, other.Owner.Access, other.Org, map[string]any{"name": "Other bot", "role": "admin"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		type call struct{ method, path string }
		calls := []call{{"GET", base}, {"POST", base}, {"GET", one}, {"PATCH", one}, {"POST", one + "/secret"}, {"DELETE", one}}
		who := []struct {
			name  string
			token string
			want  []int // per call
		}{
			{"billing", w.Billing.Access, []int{403, 403, 403, 403, 403, 403}},
			{"member", w.Member.Access, []int{403, 403, 403, 403, 403, 403}},
			{"stranger", w.Stranger.Access, []int{404, 404, 404, 404, 404, 404}},
			{"other workspace's admin", other.Admin.Access, []int{404, 404, 404, 404, 404, 404}},
			{"other workspace's key", otherKey, []int{404, 404, 404, 404, 404, 404}},
			{"member key", memberKey, []int{403, 403, 403, 403, 403, 403}},
			{"admin key", adminKey, []int{200, 403, 200, 200, 403, 403}},
		}
		for _, u := range who {
			for i, c := range calls {
				var body any
				if c.method == "POST" && c.path == base {
					body = appBody("none")
				} else if c.method == "PATCH" {
					body = map[string]any{"client_name": "Renamed by " + u.name}
				}
				if r := env.Do(t, c.method, c.path, u.token, body); r.Status != u.want[i] {
					t.Errorf("%s: %s %s = %d %s; want %d", u.name, c.method, c.path, r.Status, r.Body, u.want[i])
				}
			}
		}
		// Another workspace's admin cannot reach this app through their own
		// workspace's path either.
		env.Do(t, "GET", "/v1/orgs/"+other.Org+"/applications/"+id, other.Owner.Access, nil).Want(t, 404)
		env.Do(t, "DELETE", "/v1/orgs/"+other.Org+"/applications/"+id, other.Owner.Access, nil).Want(t, 404)
		env.Do(t, "POST", "/v1/orgs/"+other.Org+"/applications/"+id+"/secret", other.Owner.Access, nil).Want(t, 404)
		env.Do(t, "PATCH", "/v1/orgs/"+other.Org+"/applications/"+id, other.Owner.Access, map[string]any{"first_party": true}).Want(t, 404)
		// A personal workspace has no applications.
		personal := "/v1/orgs/" + w.Owner.OrgID + "/applications"
		env.Do(t, "GET", personal, w.Owner.Access, nil).Want(t, 403)
		env.Do(t, "POST", personal, w.Owner.Access, appBody("none")).Want(t, 403)
		// The application was never changed by anyone refused above.
		if n := env.Do(t, "GET", one, w.Owner.Access, nil).Want(t, 200).Str("application.client_name"); n != "Renamed by admin key" {
			t.Errorf("client_name = %q", n)
		}
		// Creating, rotating and deleting need a recent sign-in.
		env.Clock.Advance(20 * time.Minute)
		env.Do(t, "POST", base, w.Owner.Access, appBody("none")).Want(t, 403)
		env.Do(t, "POST", one+"/secret", w.Owner.Access, nil).Want(t, 403)
		env.Do(t, "DELETE", one, w.Owner.Access, nil).Want(t, 403)
	})
}

// TestWsApplicationsValidation: each field's rules answer 400 naming the
// problem, never 500.
func TestWsApplicationsValidation(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		base := "/v1/orgs/" + w.Org + "/applications"
		with := func(k string, v any) map[string]any {
			b := appBody("client_secret_basic")
			b[k] = v
			return b
		}
		bigJWKS := map[string]any{"keys": []any{map[string]any{"kty": "RSA", "n": strings.Repeat("A", 20000), "e": "AQAB"}}}
		privJWKS := map[string]any{"keys": []any{map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA"}}}
		octJWKS := map[string]any{"keys": []any{map[string]any{"kty": "oct", "k": "c2VjcmV0"}}}
		bad := []map[string]any{
			with("client_name", "x"), with("client_name", "two\nlines"), with("client_name", nil),
			with("redirect_uris", []string{}), with("redirect_uris", []string{"http://example.com/cb"}),
			with("redirect_uris", []string{"https://a.example/cb#frag"}), with("redirect_uris", []string{"javascript:alert(1)"}),
			with("redirect_uris", []string{"https://a.example/cb", "https://a.example/cb"}),
			with("post_logout_redirect_uris", []string{"ftp://x"}), with("scope", "openid admin"),
			with("token_endpoint_auth_method", "client_secret_jwt"), with("id_token_signed_response_alg", "HS256"),
			with("backchannel_logout_uri", "http://rp.example.com/logout"), with("jwks_uri", "https://rp.example.com/jwks"),
			with("redirect_uris", "https://a.example/cb"),
		}
		jwt := func(k string, v any) map[string]any {
			b := appBody("private_key_jwt")
			b[k] = v
			return b
		}
		bad = append(bad, appBody("private_key_jwt"), jwt("jwks_uri", "http://rp.example.com/jwks"), jwt("jwks", bigJWKS),
			jwt("jwks", privJWKS), jwt("jwks", octJWKS), jwt("jwks", map[string]any{"keys": "x"}), jwt("jwks", "text"))
		for i, b := range bad {
			if r := env.Do(t, "POST", base, w.Owner.Access, b); r.Status != 400 {
				t.Errorf("case %d %v: %d %s; want 400", i, b, r.Status, r.Body)
			}
		}
		env.Do(t, "POST", base, w.Owner.Access, "{not json").Want(t, 400)
		env.Do(t, "GET", base+"/not-a-uuid", w.Owner.Access, nil).Want(t, 404)
		// Both jwks_uri and jwks is refused; one alone is fine.
		both := jwt("jwks_uri", "https://rp.example.com/jwks")
		both["jwks"] = map[string]any{"keys": []any{}}
		env.Do(t, "POST", base, w.Owner.Access, both).Want(t, 400)
		env.Do(t, "POST", base, w.Owner.Access, jwt("jwks_uri", "https://rp.example.com/jwks")).Want(t, 200)
	})
}

// TestWsApplicationsLimit: a workspace holds at most 50 live
// applications; deleting one makes room.
func TestWsApplicationsLimit(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		base := "/v1/orgs/" + w.Org + "/applications"
		var last string
		for i := 0; i < 50; i++ {
			b := appBody("none")
			b["client_name"] = fmt.Sprintf("App %d", i)
			last = env.Do(t, "POST", base, w.Owner.Access, b).Want(t, http.StatusOK).Str("application.id")
		}
		env.Do(t, "POST", base, w.Owner.Access, appBody("none")).Want(t, http.StatusConflict)
		env.Do(t, "DELETE", base+"/"+last, w.Owner.Access, nil).Want(t, 200)
		env.Do(t, "POST", base, w.Owner.Access, appBody("none")).Want(t, http.StatusOK)
	})
}
