package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestKeyExchange covers "POST /v1/auth/token" with user keys (spec 4.1
// rule 5, section 5 rules 1-5, section 7; CONTRACT §4 claims).
func TestKeyExchange(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("token for the key's org", func(t *testing.T) {
			a := env.Register(t)
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Exchange me"}).Str("api_key.secret")
			now := env.Clock.Now()
			r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			body := r.JSON()
			if _, ok := body["refresh_token"]; ok {
				t.Errorf("body has a refresh_token field: %s", r.Body)
			}
			access := r.Str("access_token")
			if access == "" {
				t.Fatalf("body = %s; want an access_token", r.Body)
			}
			meNear(t, "expires_at", meTime(t, "expires_at", body["expires_at"]), now.Add(15*time.Minute))
			if r.Str("org.id") != a.OrgID || r.Str("org.name") != "Test User" || r.Str("org.role") != "owner" {
				t.Errorf("org = %v; want id %s, name Test User, role owner", body["org"], a.OrgID)
			}
			if got := meStrings(r.Get("org.tools")); !meEqual(got, allTools) {
				t.Errorf("org.tools = %v; want %v", r.Get("org.tools"), allTools)
			}

			c := meClaims(t, access)
			if c["via"] != "api_key" {
				t.Errorf("via claim = %v; want api_key", c["via"])
			}
			if _, ok := c["sid"]; ok {
				t.Errorf("claims have sid %v; want none for key exchange", c["sid"])
			}
			if c["sub"] != a.UserID {
				t.Errorf("sub = %v; want %s", c["sub"], a.UserID)
			}
			if org, _ := c["org"].(map[string]any); org == nil || org["id"] != a.OrgID || org["role"] != "owner" || !meEqual(meStrings(org["tools"]), allTools) {
				t.Errorf("org claim = %v; want id %s, role owner, all tools", c["org"], a.OrgID)
			}
			if exp, _ := c["exp"].(float64); time.Unix(int64(exp), 0).Sub(now) > 15*time.Minute+2*time.Second {
				t.Errorf("exp = %v; want at most 15 minutes after %s", c["exp"], now)
			}

			// The token is a bearer token for non-full operations...
			if got := env.Do(t, "GET", "/v1/auth/me", access, nil).Want(t, 200).Str("user.id"); got != a.UserID {
				t.Errorf("GET /v1/auth/me user.id = %q; want %q", got, a.UserID)
			}
			// ...but not a full session, and bound to its workspace.
			refused := []struct {
				name       string
				method     string
				path       string
				body       any
				wantStatus int
			}{
				{"sessions list", "GET", "/v1/me/sessions", nil, 403},
				{"switch-org to its own org", "POST", "/v1/auth/switch-org", map[string]string{"org_id": a.OrgID}, 403},
			}
			for _, tt := range refused {
				t.Run(tt.name, func(t *testing.T) {
					r := env.Do(t, tt.method, tt.path, access, tt.body)
					if r.Status != tt.wantStatus {
						t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
					}
					meWantError(t, r)
				})
			}

			env.Clock.Advance(15*time.Minute + time.Second)
			env.Do(t, "GET", "/v1/auth/me", access, nil).Want(t, 401)
		})

		t.Run("tools are enabled within allowlist", func(t *testing.T) {
			a := env.Register(t)
			meExec(t, env, `INSERT INTO org_tools (org_id, tool, enabled) VALUES ($1, 'notes', FALSE)`, a.OrgID)
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Narrow", "tools": []string{"crm", "notes", "tasks"}}).Str("api_key.secret")
			r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			want := []string{"tasks", "crm"}
			if got := meStrings(r.Get("org.tools")); !meEqual(got, want) {
				t.Errorf("org.tools = %v; want %v", r.Get("org.tools"), want)
			}
			org, _ := meClaims(t, r.Str("access_token"))["org"].(map[string]any)
			if got := meStrings(org["tools"]); !meEqual(got, want) {
				t.Errorf("org.tools claim = %v; want %v", org["tools"], want)
			}
		})

		t.Run("refused keys", func(t *testing.T) {
			a := env.Register(t)
			revoked := meCreateKey(t, env, a.Access, map[string]any{"name": "Revoked"})
			env.Do(t, "DELETE", "/v1/me/api-keys/"+revoked.Str("api_key.id"), a.Access, nil).Want(t, 200)
			tests := []struct {
				name       string
				body       any
				wantStatus int
			}{
				{"missing api_key", map[string]any{}, 400},
				{"empty body", "", 400},
				{"api_key not a string", `{"api_key": 5}`, 400},
				{"body not json", `{"api_key":`, 400},
				{"revoked", map[string]string{"api_key": revoked.Str("api_key.secret")}, 401},
				{"unknown user key", map[string]string{"api_key": "svc_u_" + testenv.RandomHex(22)}, 401},
				{"unknown org key", map[string]string{"api_key": "svc_o_" + testenv.RandomHex(22)}, 401},
				{"garbage", map[string]string{"api_key": "garbage"}, 401},
				{"a refresh token", map[string]string{"api_key": a.Refresh}, 401},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := env.Do(t, "POST", "/v1/auth/token", "", tt.body)
					if r.Status != tt.wantStatus {
						t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
					}
					meWantError(t, r)
				})
			}
		})

		t.Run("expired key", func(t *testing.T) {
			a := env.Register(t)
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Ninety days", "expires_in_days": 90}).Str("api_key.secret")
			env.Clock.Advance(89 * 24 * time.Hour)
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			env.Clock.Advance(2 * 24 * time.Hour)
			r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret})
			if r.Status != 401 {
				t.Fatalf("status = %d, body %s; want 401", r.Status, r.Body)
			}
			meWantError(t, r)
		})

		t.Run("raw key as bearer", func(t *testing.T) {
			a := env.Register(t)
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Raw"}).Str("api_key.secret")
			for _, tt := range []struct{ name, path string }{
				{"auth me", "/v1/auth/me"},
				{"workspace list", "/v1/me/orgs"},
				{"auth verify", "/v1/auth/verify"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := env.Do(t, "GET", tt.path, secret, nil)
					if r.Status != 401 {
						t.Fatalf("status = %d, body %s; want 401", r.Status, r.Body)
					}
					meWantError(t, r)
				})
			}
		})

		t.Run("live membership", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			team := meTeamOrg(t, env, "Live Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Team key", "org_id": team}).Str("api_key.secret")
			exchange := func() *testenv.Resp {
				return env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret})
			}
			r := exchange().Want(t, 200)
			if r.Str("org.id") != team || r.Str("org.role") != "member" || r.Str("org.name") != "Live Team" {
				t.Errorf("org = %v; want id %s, role member, name Live Team", r.Get("org"), team)
			}
			meExec(t, env, `UPDATE memberships SET role = 'admin' WHERE org_id = $1 AND user_id = $2`, team, a.UserID)
			if got := exchange().Want(t, 200).Str("org.role"); got != "admin" {
				t.Errorf("role after promotion = %q; want admin (membership re-read at each exchange)", got)
			}
			meExec(t, env, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, team, a.UserID)
			if r := exchange(); r.Status != 401 {
				t.Errorf("after removal from the org: status = %d, body %s; want 401", r.Status, r.Body)
			}
		})

		t.Run("deleted org", func(t *testing.T) {
			a := env.Register(t)
			team := meTeamOrg(t, env, "Short Lived", [2]string{a.UserID, "owner"})
			secret := meCreateKey(t, env, a.Access, map[string]any{"name": "Team key", "org_id": team}).Str("api_key.secret")
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			meExec(t, env, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, team, env.Clock.Now().UnixMicro())
			if r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}); r.Status != 401 {
				t.Errorf("status = %d, body %s; want 401", r.Status, r.Body)
			}
		})

		t.Run("last_used_at", func(t *testing.T) {
			a := env.Register(t)
			k := meCreateKey(t, env, a.Access, map[string]any{"name": "Used"})
			env.Clock.Advance(time.Hour)
			a.Access = env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200).Str("access_token")
			rows := meList(t, env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200), "api_keys")
			if len(rows) != 1 || rows[0]["last_used_at"] != nil {
				t.Fatalf("keys before exchange = %v; want one with last_used_at null", rows)
			}
			used := env.Clock.Now()
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": k.Str("api_key.secret")}).Want(t, 200)
			rows = meList(t, env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200), "api_keys")
			if len(rows) != 1 || rows[0]["last_used_at"] == nil {
				t.Fatalf("keys after exchange = %v; want last_used_at set", rows)
			}
			meNear(t, "last_used_at", meTime(t, "last_used_at", rows[0]["last_used_at"]), used)
		})
	})
}
