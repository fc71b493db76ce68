package web_test

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var userKeySecret = regexp.MustCompile(`^svc_u_[A-Za-z0-9_-]{43,}$`)

// TestCreateUserKey covers "POST /v1/me/api-keys" (spec 4.2 rule 5, section
// 5 rule 4, section 8; CONTRACT §3 API key shape and §4 expiry inputs).
func TestCreateUserKey(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		team := meTeamOrg(t, env, "Key Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
		now := env.Clock.Now()
		day := 24 * time.Hour

		tests := []struct {
			name        string
			body        any
			wantOrg     string
			wantTools   []string
			wantExpires time.Duration // 0: expires_at null
		}{
			{"defaults", map[string]any{"name": "CLI key"}, a.OrgID, allTools, 365 * day},
			{"role is ignored", map[string]any{"name": "With role", "role": "admin"}, a.OrgID, allTools, 365 * day},
			{"expires_in_days null", `{"name": "Null expiry", "expires_in_days": null}`, a.OrgID, allTools, 365 * day},
			{"expires_in_days 90", map[string]any{"name": "Ninety", "expires_in_days": 90}, a.OrgID, allTools, 90 * day},
			{"expires_in_days 0 never expires", map[string]any{"name": "Forever", "expires_in_days": 0}, a.OrgID, allTools, 0},
			{"expires_in_days 3650", map[string]any{"name": "Decade", "expires_in_days": 3650}, a.OrgID, allTools, 3650 * day},
			{"expires_in_days 1", map[string]any{"name": "One day", "expires_in_days": 1}, a.OrgID, allTools, day},
			{"tools in canonical order", map[string]any{"name": "Some tools", "tools": []string{"crm", "tasks"}}, a.OrgID, []string{"tasks", "crm"}, 365 * day},
			{"tools null means all", `{"name": "Null tools", "tools": null}`, a.OrgID, allTools, 365 * day},
			{"team org the caller is in", map[string]any{"name": "Team key", "org_id": team}, team, allTools, 365 * day},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := env.Do(t, "POST", "/v1/me/api-keys", a.Access, tt.body)
				if r.Status != 200 {
					t.Fatalf("status = %d, body %s; want 200", r.Status, r.Body)
				}
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
				if k["org_id"] != tt.wantOrg {
					t.Errorf("org_id = %v; want %s", k["org_id"], tt.wantOrg)
				}
				if got := meStrings(k["tools"]); !meEqual(got, tt.wantTools) {
					t.Errorf("tools = %v; want %v", k["tools"], tt.wantTools)
				}
				if v, ok := k["last_used_at"]; !ok || v != nil {
					t.Errorf("last_used_at = %#v (present %v); want null", v, ok)
				}
				meNear(t, "created_at", meTime(t, "created_at", k["created_at"]), now)
				if tt.wantExpires == 0 {
					if v, ok := k["expires_at"]; !ok || v != nil {
						t.Errorf("expires_at = %#v (present %v); want null", v, ok)
					}
				} else {
					meNear(t, "expires_at", meTime(t, "expires_at", k["expires_at"]), now.Add(tt.wantExpires))
				}
			})
		}
	})
}

// TestCreateUserKeyRefused covers the refusals of "POST /v1/me/api-keys".
func TestCreateUserKeyRefused(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		keyToken := meKeyToken(t, env, a)
		gone := meTeamOrg(t, env, "Gone Team", [2]string{a.UserID, "owner"})
		meExec(t, env, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
		tests := []struct {
			name       string
			token      string
			body       any
			wantStatus int
		}{
			{"expires_in_days -1", a.Access, map[string]any{"name": "Key", "expires_in_days": -1}, 400},
			{"expires_in_days 3651", a.Access, map[string]any{"name": "Key", "expires_in_days": 3651}, 400},
			{"expires_in_days 1.5", a.Access, `{"name": "Key", "expires_in_days": 1.5}`, 400},
			{"expires_in_days string", a.Access, `{"name": "Key", "expires_in_days": "x"}`, 400},
			{"name missing", a.Access, map[string]any{}, 400},
			{"empty body", a.Access, "", 400},
			{"name one character", a.Access, map[string]any{"name": "k"}, 400},
			{"name blank", a.Access, map[string]any{"name": "    "}, 400},
			{"name not a string", a.Access, `{"name": 42}`, 400},
			{"unknown tool", a.Access, map[string]any{"name": "Key", "tools": []string{"tasks", "spreadsheets"}}, 400},
			{"tools not an array", a.Access, `{"name": "Key", "tools": "tasks"}`, 400},
			{"org of another user", a.Access, map[string]any{"name": "Key", "org_id": b.OrgID}, 403},
			{"deleted org", a.Access, map[string]any{"name": "Key", "org_id": gone}, 403},
			{"api-key token", keyToken, map[string]any{"name": "Key"}, 403},
			{"no token", "", map[string]any{"name": "Key"}, 401},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := env.Do(t, "POST", "/v1/me/api-keys", tt.token, tt.body)
				if r.Status != tt.wantStatus {
					t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
				}
				meWantError(t, r)
			})
		}
		// Only the key behind keyToken exists.
		rows := meList(t, env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200), "api_keys")
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
			r := meCreateKey(t, env, a.Access, map[string]any{"name": name, "role": "owner"})
			keys = append(keys, key{r.Str("api_key.id"), r.Str("api_key.secret")})
			env.Clock.Advance(time.Second)
		}
		bKey := meCreateKey(t, env, b.Access, map[string]any{"name": "B's key"})

		t.Run("list newest first without secrets", func(t *testing.T) {
			r := env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200)
			rows := meList(t, r, "api_keys")
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
			rows := meList(t, env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200), "api_keys")
			if len(rows) != 2 || rows[0]["id"] != keys[2].id || rows[1]["id"] != keys[0].id {
				t.Errorf("keys after revoke = %v; want %s then %s", rows, keys[2].id, keys[0].id)
			}
		})

		t.Run("concurrent revokes", func(t *testing.T) {
			id := meCreateKey(t, env, a.Access, map[string]any{"name": "Twice revoked"}).Str("api_key.id")
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
			keyToken := meKeyToken(t, env, a)
			tests := []struct {
				name       string
				method     string
				path       string
				token      string
				wantStatus int
			}{
				{"delete again", "DELETE", "/v1/me/api-keys/" + keys[1].id, a.Access, 404},
				{"delete another user's key", "DELETE", "/v1/me/api-keys/" + bKey.Str("api_key.id"), a.Access, 404},
				{"delete random uuid", "DELETE", "/v1/me/api-keys/" + uuid.NewString(), a.Access, 404},
				{"delete not a uuid", "DELETE", "/v1/me/api-keys/not-a-key", a.Access, 404},
				{"delete with api-key token", "DELETE", "/v1/me/api-keys/" + keys[0].id, keyToken, 403},
				{"list with api-key token", "GET", "/v1/me/api-keys", keyToken, 403},
				{"list without token", "GET", "/v1/me/api-keys", "", 401},
				{"delete without token", "DELETE", "/v1/me/api-keys/" + keys[0].id, "", 401},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := env.Do(t, tt.method, tt.path, tt.token, nil)
					if r.Status != tt.wantStatus {
						t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
					}
					meWantError(t, r)
				})
			}
			// The refused deletes revoked nothing.
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": bKey.Str("api_key.secret")}).Want(t, 200)
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": keys[0].secret}).Want(t, 200)
		})
	})
}
