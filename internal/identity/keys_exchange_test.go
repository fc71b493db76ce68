package identity_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// TestKeyExchange covers "POST /v1/auth/token" with user keys (spec 4.1
// rule 5, section 5 rules 1-5, section 7; CONTRACT §4 claims).
func TestKeyExchange(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("token for the key's org", func(t *testing.T) {
			a := env.Register(t)
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Exchange me"}).Str("api_key.secret")
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
			testenv.Near(t, "expires_at", testenv.Time(t, "expires_at", body["expires_at"]), now.Add(15*time.Minute))
			if r.Str("org.id") != a.OrgID || r.Str("org.name") != "Test User" || r.Str("org.role") != "owner" {
				t.Errorf("org = %v; want id %s, name Test User, role owner", body["org"], a.OrgID)
			}
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, workspace.Tools) {
				t.Errorf("org.tools = %v; want %v", r.Get("org.tools"), workspace.Tools)
			}

			c := testenv.Claims(t, access)
			if c["via"] != "api_key" {
				t.Errorf("via claim = %v; want api_key", c["via"])
			}
			if _, ok := c["sid"]; ok {
				t.Errorf("claims have sid %v; want none for key exchange", c["sid"])
			}
			if c["sub"] != a.UserID {
				t.Errorf("sub = %v; want %s", c["sub"], a.UserID)
			}
			if org, _ := c["org"].(map[string]any); org == nil || org["id"] != a.OrgID || org["role"] != "owner" || !slices.Equal(testenv.Strings(org["tools"]), workspace.Tools) {
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
			env.RunCases(t, []testenv.Case{
				{Name: "sessions list", Method: "GET", Path: "/v1/me/sessions", Token: access, Want: 403},
				{Name: "switch-org to its own org", Method: "POST", Path: "/v1/auth/switch-org", Token: access, Body: map[string]string{"org_id": a.OrgID}, Want: 403},
			})

			env.Clock.Advance(15*time.Minute + time.Second)
			env.Do(t, "GET", "/v1/auth/me", access, nil).Want(t, 401)
		})

		t.Run("tools are enabled within allowlist", func(t *testing.T) {
			a := env.Register(t)
			env.Exec(t, `INSERT INTO org_tools (org_id, tool, enabled) VALUES ($1, 'notes', FALSE)`, a.OrgID)
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Narrow", "tools": []string{"crm", "notes", "tasks"}}).Str("api_key.secret")
			r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			want := []string{"tasks", "crm"}
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("org.tools = %v; want %v", r.Get("org.tools"), want)
			}
			org, _ := testenv.Claims(t, r.Str("access_token"))["org"].(map[string]any)
			if got := testenv.Strings(org["tools"]); !slices.Equal(got, want) {
				t.Errorf("org.tools claim = %v; want %v", org["tools"], want)
			}
		})

		t.Run("refused keys", func(t *testing.T) {
			a := env.Register(t)
			revoked := env.CreateUserKey(t, a.Access, map[string]any{"name": "Revoked"})
			env.Do(t, "DELETE", "/v1/me/api-keys/"+revoked.Str("api_key.id"), a.Access, nil).Want(t, 200)
			const path = "/v1/auth/token"
			env.RunCases(t, []testenv.Case{
				{Name: "missing api_key", Method: "POST", Path: path, Body: map[string]any{}, Want: 400},
				{Name: "empty body", Method: "POST", Path: path, Body: "", Want: 400},
				{Name: "api_key not a string", Method: "POST", Path: path, Body: `{"api_key": 5}`, Want: 400},
				{Name: "body not json", Method: "POST", Path: path, Body: `{"api_key":`, Want: 400},
				{Name: "revoked", Method: "POST", Path: path, Body: map[string]string{"api_key": revoked.Str("api_key.secret")}, Want: 401},
				{Name: "unknown user key", Method: "POST", Path: path, Body: map[string]string{"api_key": "svc_u_" + testenv.RandomHex(22)}, Want: 401},
				{Name: "unknown org key", Method: "POST", Path: path, Body: map[string]string{"api_key": "svc_o_" + testenv.RandomHex(22)}, Want: 401},
				{Name: "garbage", Method: "POST", Path: path, Body: map[string]string{"api_key": "garbage"}, Want: 401},
				{Name: "a refresh token", Method: "POST", Path: path, Body: map[string]string{"api_key": a.Refresh}, Want: 401},
			})
		})

		t.Run("expired key", func(t *testing.T) {
			a := env.Register(t)
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Ninety days", "expires_in_days": 90}).Str("api_key.secret")
			env.Clock.Advance(89 * 24 * time.Hour)
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			env.Clock.Advance(2 * 24 * time.Hour)
			env.Call(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 401)
		})

		t.Run("raw key as bearer", func(t *testing.T) {
			a := env.Register(t)
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Raw"}).Str("api_key.secret")
			env.RunCases(t, []testenv.Case{
				{Name: "auth me", Method: "GET", Path: "/v1/auth/me", Token: secret, Want: 401},
				{Name: "workspace list", Method: "GET", Path: "/v1/me/orgs", Token: secret, Want: 401},
				{Name: "auth verify", Method: "GET", Path: "/v1/auth/verify", Token: secret, Want: 401},
			})
		})

		t.Run("live membership", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			team := env.TeamOrg(t, "Live Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Team key", "org_id": team}).Str("api_key.secret")
			exchange := func() *testenv.Resp {
				return env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret})
			}
			r := exchange().Want(t, 200)
			if r.Str("org.id") != team || r.Str("org.role") != "member" || r.Str("org.name") != "Live Team" {
				t.Errorf("org = %v; want id %s, role member, name Live Team", r.Get("org"), team)
			}
			env.Exec(t, `UPDATE memberships SET role = 'admin' WHERE org_id = $1 AND user_id = $2`, team, a.UserID)
			if got := exchange().Want(t, 200).Str("org.role"); got != "admin" {
				t.Errorf("role after promotion = %q; want admin (membership re-read at each exchange)", got)
			}
			env.Exec(t, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, team, a.UserID)
			if r := exchange(); r.Status != 401 {
				t.Errorf("after removal from the org: status = %d, body %s; want 401", r.Status, r.Body)
			}
		})

		t.Run("deleted org", func(t *testing.T) {
			a := env.Register(t)
			team := env.TeamOrg(t, "Short Lived", [2]string{a.UserID, "owner"})
			secret := env.CreateUserKey(t, a.Access, map[string]any{"name": "Team key", "org_id": team}).Str("api_key.secret")
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, team, env.Clock.Now().UnixMicro())
			if r := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}); r.Status != 401 {
				t.Errorf("status = %d, body %s; want 401", r.Status, r.Body)
			}
		})

		t.Run("last_used_at", func(t *testing.T) {
			a := env.Register(t)
			k := env.CreateUserKey(t, a.Access, map[string]any{"name": "Used"})
			env.Clock.Advance(time.Hour)
			a.Access = env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200).Str("access_token")
			rows := env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200).List(t, "api_keys")
			if len(rows) != 1 || rows[0]["last_used_at"] != nil {
				t.Fatalf("keys before exchange = %v; want one with last_used_at null", rows)
			}
			used := env.Clock.Now()
			env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": k.Str("api_key.secret")}).Want(t, 200)
			rows = env.Do(t, "GET", "/v1/me/api-keys", a.Access, nil).Want(t, 200).List(t, "api_keys")
			if len(rows) != 1 || rows[0]["last_used_at"] == nil {
				t.Fatalf("keys after exchange = %v; want last_used_at set", rows)
			}
			testenv.Near(t, "last_used_at", testenv.Time(t, "last_used_at", rows[0]["last_used_at"]), used)
		})
	})
}

// TestOrgKeyTokenVerifies checks that a service-account token is valid at
// GET /v1/auth/verify, naming the key, with the key's org and role.
func TestOrgKeyTokenVerifies(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newOrgKeyWorld(t, env, "admin")
		orgID, access, key, tok := w.org, w.access, w.key, w.keyToken
		v := env.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 200)
		if v.Get("valid") != true || v.Str("user_id") != key.Str("api_key.id") || v.Str("name") != "deploy bot" ||
			v.Str("org_id") != orgID || v.Str("org_role") != "admin" {
			t.Fatalf("verify = %s; want valid, the key's id and name, org %s, role admin", v.Body, orgID)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+orgID+"/api-keys/"+key.Str("api_key.id"), access, nil).Want(t, 200)
		env.Clock.Advance(3e9) // past the verify cache
		env.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 401)
	})
}

// TestKeyTokenOtherOrgFullRoutes checks that a key token asking a full-session
// org route about another workspace gets 404 (outside its workspace), and
// 403 only for its own.
func TestKeyTokenOtherOrgFullRoutes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newOrgKeyWorld(t, env, "admin")
		orgID, tok := w.org, w.keyToken
		other := env.Do(t, "POST", "/v1/orgs", w.owner.Access, map[string]string{"name": "Other Org"}).Want(t, 200).Str("org.id")
		for _, path := range []string{"/invitations", "/api-keys"} {
			env.Do(t, "GET", "/v1/orgs/"+orgID+path, tok, nil).Want(t, 403)
			env.Do(t, "GET", "/v1/orgs/"+other+path, tok, nil).Want(t, 404)
			env.Do(t, "GET", "/v1/orgs/"+uuid.NewString()+path, tok, nil).Want(t, 404)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+other, tok, nil).Want(t, 404)
		env.Do(t, "DELETE", "/v1/orgs/"+orgID, tok, nil).Want(t, 403)
	})
}

// TestMeWithKeyTokens checks GET /v1/auth/me with key-exchange tokens: the
// org context lists the token's tools (the org's enabled tools within the
// key's allowlist), and an org key's token answers with the key itself.
func TestMeWithKeyTokens(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.Do(t, "POST", "/v1/orgs", owner.Access, map[string]string{"name": "Me Org"}).Want(t, 200)
		orgID, access := org.Str("org.id"), org.Str("access_token")

		narrow := env.Do(t, "POST", "/v1/me/api-keys", owner.Access, map[string]any{"name": "narrow", "org_id": orgID, "tools": []string{"notes", "crm"}}).Want(t, 200)
		tok := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": narrow.Str("api_key.secret")}).Want(t, 200).Str("access_token")
		me := env.Do(t, "GET", "/v1/auth/me", tok, nil).Want(t, 200)
		if got := fmt.Sprint(me.Get("org.tools")); got != "[notes crm]" || me.Str("user.id") != owner.UserID || me.Str("org.id") != orgID {
			t.Errorf("me with a narrowed key = %s; want user %s, org %s, tools [notes crm]", me.Body, owner.UserID, orgID)
		}

		key := env.Do(t, "POST", "/v1/orgs/"+orgID+"/api-keys", access, map[string]any{"name": "deploy bot", "role": "member"}).Want(t, 200)
		otok := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": key.Str("api_key.secret")}).Want(t, 200).Str("access_token")
		me = env.Do(t, "GET", "/v1/auth/me", otok, nil).Want(t, 200)
		if me.Str("user.id") != key.Str("api_key.id") || me.Str("user.name") != "deploy bot" || me.Str("org.id") != orgID || me.Str("org.role") != "member" {
			t.Errorf("me with an org key = %s; want the key as user, org %s, role member", me.Body, orgID)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+orgID+"/api-keys/"+key.Str("api_key.id"), access, nil).Want(t, 200)
		// Revoking the key revokes its tokens (issue 13 item 7).
		env.Do(t, "GET", "/v1/auth/me", otok, nil).Want(t, 401)
	})
}

// TestOrgKeyOnPersonalRoutes checks that an org key's token, which has no
// person behind it, is refused with 403 on the routes about the caller.
func TestOrgKeyOnPersonalRoutes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		tok := newOrgKeyWorld(t, env, "admin").keyToken
		env.Do(t, "PATCH", "/v1/me", tok, map[string]string{"name": "Robo"}).Want(t, 403)
		env.Do(t, "GET", "/v1/me/orgs", tok, nil).Want(t, 403)
		env.Do(t, "GET", "/v1/me/discoverable", tok, nil).Want(t, 403)
		env.Do(t, "POST", "/v1/orgs", tok, map[string]string{"name": "Robo Org"}).Want(t, 403)
	})
}

// orgKeyWorld is a team org of a new owner with an org key of role and its
// exchanged token.
type orgKeyWorld struct {
	owner       *testenv.Account
	org, access string // the org and the owner's token scoped to it
	key         *testenv.Resp
	keyToken    string
}

func newOrgKeyWorld(t *testing.T, env *testenv.Env, role string) *orgKeyWorld {
	t.Helper()
	w := &orgKeyWorld{owner: env.Register(t)}
	org := env.Do(t, "POST", "/v1/orgs", w.owner.Access, map[string]string{"name": "Key Org"}).Want(t, 200)
	w.org, w.access = org.Str("org.id"), org.Str("access_token")
	w.key = env.Do(t, "POST", "/v1/orgs/"+w.org+"/api-keys", w.access, map[string]any{"name": "deploy bot", "role": role}).Want(t, 200)
	w.keyToken = env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": w.key.Str("api_key.secret")}).Want(t, 200).Str("access_token")
	return w
}
