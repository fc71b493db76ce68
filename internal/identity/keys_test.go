package identity_test

import (
	"bytes"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

var userKeySecret = regexp.MustCompile(`^svc_u_[A-Za-z0-9_-]{43,}$`)

// TestCreateUserKey covers "POST /v1/me/api-keys" (spec 4.2 rule 5, section
// 5 rule 4, section 8; CONTRACT §3 API key shape and §4 expiry inputs).
func TestCreateUserKey(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		team := env.TeamOrg(t, "Key Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
		now := env.Clock.Now()
		day := 24 * time.Hour

		// created checks the created key: its shape, org, tools and expiry.
		created := func(org string, tools []string, expires time.Duration) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				k, ok := r.JSON()["api_key"].(map[string]any)
				if !ok {
					t.Fatalf("body = %s; want {api_key}", r.Body)
				}
				secret, _ := k["secret"].(string)
				if !userKeySecret.MatchString(secret) {
					t.Errorf("secret = %q; want svc_u_ and at least 43 characters of [A-Za-z0-9_-]", secret)
				}
				if len(secret) >= 12 && k["prefix"] != secret[:12] {
					t.Errorf("prefix = %v; want %q (the secret's first 12 characters)", k["prefix"], secret[:12])
				}
				if id, _ := k["id"].(string); uuid.Validate(id) != nil {
					t.Errorf("id = %#v; want a uuid", k["id"])
				}
				if k["kind"] != "user" {
					t.Errorf("kind = %v; want user", k["kind"])
				}
				if _, ok := k["role"]; ok {
					t.Errorf("role = %v; want no role field on a user key", k["role"])
				}
				if k["org_id"] != org {
					t.Errorf("org_id = %v; want %s", k["org_id"], org)
				}
				if got := testenv.Strings(k["tools"]); !slices.Equal(got, tools) {
					t.Errorf("tools = %v; want %v", k["tools"], tools)
				}
				if v, ok := k["last_used_at"]; !ok || v != nil {
					t.Errorf("last_used_at = %#v (present %v); want null", v, ok)
				}
				testenv.Near(t, "created_at", testenv.Time(t, "created_at", k["created_at"]), now)
				if expires == 0 { // expires_at null
					if v, ok := k["expires_at"]; !ok || v != nil {
						t.Errorf("expires_at = %#v (present %v); want null", v, ok)
					}
				} else {
					testenv.Near(t, "expires_at", testenv.Time(t, "expires_at", k["expires_at"]), now.Add(expires))
				}
			}
		}
		create := func(name string, body any, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: body, Want: 200, Check: check}
		}
		env.RunCases(t, []testenv.Case{
			create("defaults", map[string]any{"name": "CLI key"}, created(a.OrgID, workspace.Tools, 365*day)),
			create("role is ignored", map[string]any{"name": "With role", "role": "admin"}, created(a.OrgID, workspace.Tools, 365*day)),
			create("expires_in_days null", `{"name": "Null expiry", "expires_in_days": null}`, created(a.OrgID, workspace.Tools, 365*day)),
			create("expires_in_days 90", map[string]any{"name": "Ninety", "expires_in_days": 90}, created(a.OrgID, workspace.Tools, 90*day)),
			create("expires_in_days 0 never expires", map[string]any{"name": "Forever", "expires_in_days": 0}, created(a.OrgID, workspace.Tools, 0)),
			create("expires_in_days 3650", map[string]any{"name": "Decade", "expires_in_days": 3650}, created(a.OrgID, workspace.Tools, 3650*day)),
			create("expires_in_days 1", map[string]any{"name": "One day", "expires_in_days": 1}, created(a.OrgID, workspace.Tools, day)),
			create("tools in canonical order", map[string]any{"name": "Some tools", "tools": []string{"crm", "tasks"}}, created(a.OrgID, []string{"tasks", "crm"}, 365*day)),
			create("tools null means all", `{"name": "Null tools", "tools": null}`, created(a.OrgID, workspace.Tools, 365*day)),
			create("team org the caller is in", map[string]any{"name": "Team key", "org_id": team}, created(team, workspace.Tools, 365*day)),
		})
	})
}

// TestCreateUserKeyRefused covers the refusals of "POST /v1/me/api-keys".
func TestCreateUserKeyRefused(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		keyToken := env.KeyToken(t, a)
		gone := env.TeamOrg(t, "Gone Team", [2]string{a.UserID, "owner"})
		env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
		env.RunCases(t, []testenv.Case{
			{Name: "expires_in_days -1", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "Key", "expires_in_days": -1}, Want: 400},
			{Name: "expires_in_days 3651", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "Key", "expires_in_days": 3651}, Want: 400},
			{Name: "expires_in_days 1.5", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: `{"name": "Key", "expires_in_days": 1.5}`, Want: 400},
			{Name: "expires_in_days string", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: `{"name": "Key", "expires_in_days": "x"}`, Want: 400},
			{Name: "name missing", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{}, Want: 400},
			{Name: "empty body", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: "", Want: 400},
			{Name: "name one character", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "k"}, Want: 400},
			{Name: "name blank", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "    "}, Want: 400},
			{Name: "name not a string", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: `{"name": 42}`, Want: 400},
			{Name: "unknown tool", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "Key", "tools": []string{"tasks", "spreadsheets"}}, Want: 400},
			{Name: "tools not an array", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: `{"name": "Key", "tools": "tasks"}`, Want: 400},
			{Name: "org of another user", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "Key", "org_id": b.OrgID}, Want: 403},
			{Name: "deleted org", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]any{"name": "Key", "org_id": gone}, Want: 403},
			{Name: "api-key token", Method: "POST", Path: "/v1/me/api-keys", Token: keyToken, Body: map[string]any{"name": "Key"}, Want: 403},
			{Name: "no token", Method: "POST", Path: "/v1/me/api-keys", Body: map[string]any{"name": "Key"}, Want: 401},
		})
		// Only the key behind keyToken exists.
		rows := env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200).List(t, "api_keys")
		if len(rows) != 1 {
			t.Errorf("keys after refused creations = %d; want 1", len(rows))
		}
	})
}

// TestUserKeys covers "GET /v1/me/api-keys" and "DELETE
// /v1/me/api-keys/{kid}" (spec 4.2 rule 4, section 3: a revoked key's
// exchange answers 401).
func TestUserKeys(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		type key struct{ id, secret string }
		var keys []key
		for _, name := range []string{"First key", "Second key", "Third key"} {
			r := env.CreateUserKey(t, a.Access, map[string]any{"name": name, "role": "owner"})
			keys = append(keys, key{r.Str("api_key.id"), r.Str("api_key.secret")})
			env.Clock.Advance(time.Second)
		}
		bKey := env.CreateUserKey(t, b.Access, map[string]any{"name": "B's key"})

		t.Run("list newest first without secrets", func(t *testing.T) {
			r := env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200)
			rows := r.List(t, "api_keys")
			if len(rows) != 3 {
				t.Fatalf("keys = %d; want 3", len(rows))
			}
			for i, row := range rows {
				want := keys[2-i]
				if row["id"] != want.id {
					t.Errorf("api_keys[%d].id = %v; want %s", i, row["id"], want.id)
				}
				if _, ok := row["secret"]; ok {
					t.Errorf("api_keys[%d] has a secret field", i)
				}
				if _, ok := row["role"]; ok {
					t.Errorf("api_keys[%d] has a role field; want none on user keys", i)
				}
				if row["prefix"] != want.secret[:12] || row["kind"] != "user" || row["org_id"] != a.OrgID {
					t.Errorf("api_keys[%d] = %v; want prefix %s, kind user, org_id %s", i, row, want.secret[:12], a.OrgID)
				}
			}
			for _, k := range keys {
				if bytes.Contains(r.Body, []byte(k.secret)) {
					t.Errorf("list body contains the secret of key %s", k.id)
				}
			}
			if bytes.Contains(r.Body, []byte(bKey.Str("api_key.id"))) {
				t.Errorf("list body contains another user's key")
			}
		})

		t.Run("revoke", func(t *testing.T) {
			revoked := keys[1]
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": revoked.secret}).Want(t, 200)
			r := env.Do(t, "DELETE", "/v1/me/api-keys/"+revoked.id, a.Access, nil).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": revoked.secret}).Want(t, 401)
			rows := env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200).List(t, "api_keys")
			if len(rows) != 2 || rows[0]["id"] != keys[2].id || rows[1]["id"] != keys[0].id {
				t.Errorf("keys after revoke = %v; want %s then %s", rows, keys[2].id, keys[0].id)
			}
		})

		t.Run("concurrent revokes", func(t *testing.T) {
			id := env.CreateUserKey(t, a.Access, map[string]any{"name": "Twice revoked"}).Str("api_key.id")
			var wg sync.WaitGroup
			status := make([]int, 5)
			for i := range status {
				wg.Go(func() { status[i] = env.Do(t, "DELETE", "/v1/me/api-keys/"+id, a.Access, nil).Status })
			}
			wg.Wait()
			ok := 0
			for _, s := range status {
				switch s {
				case 200:
					ok++
				case 404:
				default:
					t.Errorf("status %d; want 200 or 404", s)
				}
			}
			if ok != 1 {
				t.Errorf("statuses %v; want exactly one 200 (a revoked key reads as 404)", status)
			}
		})

		t.Run("refused", func(t *testing.T) {
			keyToken := env.KeyToken(t, a)
			env.RunCases(t, []testenv.Case{
				{Name: "delete again", Method: "DELETE", Path: "/v1/me/api-keys/" + keys[1].id, Token: a.Access, Want: 404},
				{Name: "delete another user's key", Method: "DELETE", Path: "/v1/me/api-keys/" + bKey.Str("api_key.id"), Token: a.Access, Want: 404},
				{Name: "delete random uuid", Method: "DELETE", Path: "/v1/me/api-keys/" + uuid.NewString(), Token: a.Access, Want: 404},
				{Name: "delete not a uuid", Method: "DELETE", Path: "/v1/me/api-keys/not-a-key", Token: a.Access, Want: 404},
				{Name: "delete with api-key token", Method: "DELETE", Path: "/v1/me/api-keys/" + keys[0].id, Token: keyToken, Want: 403},
				{Name: "list with api-key token", Method: "GET", Path: "/v1/me/api-keys", Token: keyToken, Want: 403},
				{Name: "list without token", Method: "GET", Path: "/v1/me/api-keys", Want: 401},
				{Name: "delete without token", Method: "DELETE", Path: "/v1/me/api-keys/" + keys[0].id, Want: 401},
			})
			// The refused deletes revoked nothing.
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": bKey.Str("api_key.secret")}).Want(t, 200)
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": keys[0].secret}).Want(t, 200)
		})
	})
}
