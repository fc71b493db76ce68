package web_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wsCheckOrgKey checks an org API key record (CONTRACT §3); withSecret
// tells whether it is the creation answer, the only one with the secret.
func wsCheckOrgKey(t *testing.T, k map[string]any, org, role string, tools []string, withSecret bool) {
	t.Helper()
	fields := []string{"id", "name", "kind", "org_id", "role", "tools", "prefix", "expires_at", "created_at", "last_used_at"}
	if withSecret {
		fields = append(fields, "secret")
	}
	wsCheckKeys(t, "api_key", k, fields...)
	if id, _ := k["id"].(string); !signinUUID.MatchString(id) {
		t.Errorf("api_key.id = %#v; want a uuid", k["id"])
	}
	if k["kind"] != "org" || k["org_id"] != org || k["role"] != role {
		t.Errorf("api_key kind, org_id, role = %v, %v, %v; want org, %s, %s", k["kind"], k["org_id"], k["role"], org, role)
	}
	if got := meStrings(k["tools"]); !slices.Equal(got, tools) {
		t.Errorf("api_key.tools = %v; want %v", k["tools"], tools)
	}
	meTime(t, "api_key.created_at", k["created_at"])
	prefix, _ := k["prefix"].(string)
	if withSecret {
		secret, _ := k["secret"].(string)
		if !strings.HasPrefix(secret, "svc_o_") || len(secret) < 30 {
			t.Errorf("api_key.secret = %q; want svc_o_ and a long random part", secret)
		}
		if len(secret) >= 12 && prefix != secret[:12] {
			t.Errorf("api_key.prefix = %q; want the secret's first 12 characters %q", prefix, secret[:12])
		}
	} else if !strings.HasPrefix(prefix, "svc_o_") || len(prefix) != 12 {
		t.Errorf("api_key.prefix = %q; want 12 characters starting svc_o_", prefix)
	}
}

// TestWsOrgKeys covers create, list and delete of org service-account keys
// (spec 2 API key, 4.4, 5.4, section 8 expiry; CONTRACT §3 API key, §4
// expiry inputs, full sessions).
func TestWsOrgKeys(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		keys := "/v1/orgs/" + w.org + "/api-keys"
		// A token from an API key is not a full session: one from a user
		// key of the owner, one from an admin-role org key.
		ownerKeyToken := wsExchange(t, env, meCreateKey(t, env, w.owner.Access, map[string]any{"name": "Owner key", "org_id": w.org}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		adminBot := wsCreateOrgKey(t, env, w.owner.Access, w.org, map[string]any{"name": "Admin bot", "role": "admin"})
		botToken := wsExchange(t, env, adminBot.Str("api_key.secret")).Want(t, 200).Str("access_token")
		env.Clock.Advance(time.Second) // every key below is newer than the bot
		created := map[string]string{} // key name → key id
		createdOK := func(role string, tools []string, expiresIn time.Duration) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				k := wsObj(t, r, "api_key")
				wsCheckOrgKey(t, k, w.org, role, tools, true)
				if expiresIn == 0 {
					if k["expires_at"] != nil {
						t.Errorf("expires_at = %v; want null (never)", k["expires_at"])
					}
				} else {
					meNear(t, "expires_at", meTime(t, "expires_at", k["expires_at"]), env.Clock.Now().Add(expiresIn))
				}
				name, _ := k["name"].(string)
				created[name], _ = k["id"].(string)
				env.Clock.Advance(time.Second) // keeps "newest first" observable
			}
		}
		year := 365 * 24 * time.Hour
		create := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) wsCase {
			return wsCase{name: name, method: "POST", path: keys, token: token, body: body, wantStatus: want, wantBody: check}
		}

		t.Run("create", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				create("role member", w.owner.Access, map[string]any{"name": "CI bot", "role": "member"}, 200, createdOK("member", allTools, year)),
				create("role billing", w.owner.Access, map[string]any{"name": "Invoices", "role": "billing", "expires_in_days": nil}, 200, createdOK("billing", allTools, year)),
				create("role admin by an admin", w.admin.Access, map[string]any{"name": "Ops", "role": "admin", "expires_in_days": 90}, 200, createdOK("admin", allTools, 90*24*time.Hour)),
				create("never expires", w.owner.Access, map[string]any{"name": "Forever", "role": "member", "expires_in_days": 0}, 200, createdOK("member", allTools, 0)),
				create("tool allowlist", w.owner.Access, map[string]any{"name": "Tasks only", "role": "member", "tools": []string{"tasks", "crm"}}, 200, createdOK("member", []string{"tasks", "crm"}, year)),
				create("role owner", w.owner.Access, map[string]any{"name": "Usurper", "role": "owner"}, 400, nil),
				create("role unknown", w.owner.Access, map[string]any{"name": "Root", "role": "root"}, 400, nil),
				create("unknown tool", w.owner.Access, map[string]any{"name": "Chatty", "role": "member", "tools": []string{"tasks", "chat"}}, 400, nil),
				create("tools not strings", w.owner.Access, map[string]any{"name": "Odd", "role": "member", "tools": []int{1}}, 400, nil),
				create("name of two characters", w.owner.Access, map[string]any{"name": "ab", "role": "member", "expires_in_days": 3650}, 200, createdOK("member", allTools, 3650*24*time.Hour)),
				create("name of one character", w.owner.Access, map[string]any{"name": "x", "role": "member"}, 400, nil),
				create("name missing", w.owner.Access, map[string]any{"role": "member"}, 400, nil),
				create("negative expiry", w.owner.Access, map[string]any{"name": "Past", "role": "member", "expires_in_days": -1}, 400, nil),
				create("expiry not an integer", w.owner.Access, map[string]any{"name": "Half", "role": "member", "expires_in_days": 1.5}, 400, nil),
				create("expiry as a string", w.owner.Access, map[string]any{"name": "Text", "role": "member", "expires_in_days": "90"}, 400, nil),
				create("expiry past ten years", w.owner.Access, map[string]any{"name": "Far", "role": "member", "expires_in_days": 3651}, 400, nil),
				create("member", w.member.Access, map[string]any{"name": "Mine", "role": "member"}, 403, nil),
				create("billing", w.billing.Access, map[string]any{"name": "Mine", "role": "member"}, 403, nil),
				create("stranger", w.stranger.Access, map[string]any{"name": "Mine", "role": "member"}, 404, nil),
				create("user key token", ownerKeyToken, map[string]any{"name": "Nested", "role": "member"}, 403, nil),
				create("admin org key token", botToken, map[string]any{"name": "Nested", "role": "member"}, 403, nil),
				create("no token", "", map[string]any{"name": "Anon", "role": "member"}, 401, nil),
				{name: "personal org", method: "POST", path: "/v1/orgs/" + w.owner.OrgID + "/api-keys", token: w.owner.Access, body: map[string]any{"name": "Solo", "role": "member"}, wantStatus: 403},
			})
		})

		t.Run("list", func(t *testing.T) {
			r := wsDo(t, env, "GET", keys, w.admin.Access, nil).Want(t, 200)
			rows := meList(t, r, "api_keys")
			var ids []string
			for _, k := range rows {
				if _, ok := k["secret"]; ok {
					t.Errorf("listed key %v has a secret field", k["id"])
				}
				role, _ := k["role"].(string)
				wsCheckOrgKey(t, k, w.org, role, meStrings(k["tools"]), false)
				id, _ := k["id"].(string)
				ids = append(ids, id)
			}
			// Newest first: the six created above in reverse, then the bot.
			want := []string{created["ab"], created["Tasks only"], created["Forever"], created["Ops"], created["Invoices"], created["CI bot"], adminBot.Str("api_key.id")}
			if !slices.Equal(ids, want) {
				t.Errorf("listed key ids = %v; want newest first %v", ids, want)
			}
			wsRun(t, env, []wsCase{
				{name: "member", method: "GET", path: keys, token: w.member.Access, wantStatus: 403},
				{name: "billing", method: "GET", path: keys, token: w.billing.Access, wantStatus: 403},
				{name: "stranger", method: "GET", path: keys, token: w.stranger.Access, wantStatus: 404},
				{name: "user key token", method: "GET", path: keys, token: ownerKeyToken, wantStatus: 403},
				{name: "admin org key token", method: "GET", path: keys, token: botToken, wantStatus: 403},
				{name: "no token", method: "GET", path: keys, wantStatus: 401},
				{name: "personal org has none", method: "GET", path: "/v1/orgs/" + w.owner.OrgID + "/api-keys", token: w.owner.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						if got := meList(t, r, "api_keys"); len(got) != 0 {
							t.Errorf("api_keys = %v; want [] (user keys are not org keys)", got)
						}
					}},
			})
		})

		t.Run("delete", func(t *testing.T) {
			victim := wsCreateOrgKey(t, env, w.owner.Access, w.org, map[string]any{"name": "Short lived", "role": "member"})
			id, secret := victim.Str("api_key.id"), victim.Str("api_key.secret")
			wsExchange(t, env, secret).Want(t, 200)
			other := meTeamOrg(t, env, "Other org", [2]string{w.owner.UserID, "owner"})
			otherKey := wsCreateOrgKey(t, env, w.owner.Access, other, map[string]any{"name": "Other bot", "role": "member"}).Str("api_key.id")
			userKey := meCreateKey(t, env, w.owner.Access, map[string]any{"name": "Owner key 2", "org_id": w.org}).Str("api_key.id")
			del := func(name, token, id string, want int) wsCase {
				return wsCase{name: name, method: "DELETE", path: keys + "/" + id, token: token, wantStatus: want}
			}
			wsRun(t, env, []wsCase{
				del("member", w.member.Access, id, 403),
				del("stranger", w.stranger.Access, id, 404),
				del("user key token", ownerKeyToken, id, 403),
				del("admin org key token", botToken, id, 403),
				del("no token", "", id, 401),
				del("another org's key", w.owner.Access, otherKey, 404),
				del("a user key of this org", w.owner.Access, userKey, 404),
				del("unknown id", w.owner.Access, uuid.NewString(), 404),
				del("malformed id", w.owner.Access, "svc_o_nope", 404),
				{name: "owner", method: "DELETE", path: keys + "/" + id, token: w.owner.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { signinWantMessage(t, r) }},
				del("again", w.owner.Access, id, 404),
				{name: "exchange of the revoked key", method: "POST", path: "/v1/auth/token", body: map[string]string{"api_key": secret}, wantStatus: 401},
			})
			for _, k := range meList(t, wsDo(t, env, "GET", keys, w.owner.Access, nil).Want(t, 200), "api_keys") {
				if k["id"] == id {
					t.Errorf("revoked key %s still listed", id)
				}
			}
			// The refused deletes left the other keys working.
			for _, kid := range []string{otherKey, userKey} {
				var revoked int
				if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE id = $1 AND revoked_at IS NOT NULL`, kid).Scan(&revoked); err != nil {
					t.Fatal(err)
				}
				if revoked != 0 {
					t.Errorf("key %s was revoked by a delete under the wrong org or kind", kid)
				}
			}
		})
	})
}

// TestWsOrgKeyExchange covers "POST /v1/auth/token" with org keys (spec 4.1
// rule 5, section 3 key row, 5.4-5.5, section 7: invalid, revoked, expired
// or workspace gone is 401).
func TestWsOrgKeyExchange(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		k := wsCreateOrgKey(t, env, w.owner.Access, w.org, map[string]any{"name": "Billing bot", "role": "billing", "tools": []string{"tasks", "notes", "crm"}, "expires_in_days": 90})
		secret, keyID := k.Str("api_key.secret"), k.Str("api_key.id")

		t.Run("token with the key's role and tools", func(t *testing.T) {
			now := env.Clock.Now()
			r := wsExchange(t, env, secret).Want(t, 200)
			if _, ok := r.JSON()["refresh_token"]; ok {
				t.Errorf("answer has a refresh_token: %s", r.Body)
			}
			if r.Str("org.id") != w.org || r.Str("org.role") != "billing" {
				t.Errorf("org = %v; want id %s role billing", r.Get("org"), w.org)
			}
			want := []string{"tasks", "notes", "crm"}
			if got := meStrings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("org.tools = %v; want %v", got, want)
			}
			exp := meTime(t, "expires_at", r.Get("expires_at"))
			if !exp.After(now) || exp.After(now.Add(time.Hour+2*time.Second)) {
				t.Errorf("expires_at = %s; want shortly after %s", exp, now)
			}
			c := meClaims(t, r.Str("access_token"))
			if c["via"] != "api_key" {
				t.Errorf("via = %v; want api_key", c["via"])
			}
			if _, ok := c["sid"]; ok {
				t.Errorf("claims have sid %v; want none for key exchange", c["sid"])
			}
			if id, role, tools := wsTokenOrg(t, r.Str("access_token")); id != w.org || role != "billing" || !slices.Equal(tools, want) {
				t.Errorf("org claim = {%s %s %v}; want {%s billing %v}", id, role, tools, w.org, want)
			}
			// The key acts in its workspace with its role, and nowhere else.
			tok := r.Str("access_token")
			wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/tools", tok, nil).Want(t, 200)
			wsDo(t, env, "PUT", "/v1/orgs/"+w.org+"/tools", tok, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 403)
			wsDo(t, env, "GET", "/v1/orgs/"+w.owner.OrgID+"/tools", tok, nil).Want(t, 404)
			wsDo(t, env, "POST", "/v1/auth/switch-org", tok, map[string]string{"org_id": w.owner.OrgID}).Want(t, 403)

			// The list shows when the key was last used.
			for _, k := range meList(t, wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/api-keys", w.owner.Access, nil).Want(t, 200), "api_keys") {
				if k["id"] == keyID {
					meNear(t, "last_used_at", meTime(t, "last_used_at", k["last_used_at"]), now)
				}
			}
		})

		t.Run("disabling a tool removes it from the next exchange", func(t *testing.T) {
			wsSetTool(t, env, w.owner.Access, w.org, "notes", false)
			r := wsExchange(t, env, secret).Want(t, 200)
			want := []string{"tasks", "crm"}
			if got := meStrings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("org.tools = %v; want %v", got, want)
			}
			if _, _, tools := wsTokenOrg(t, r.Str("access_token")); !slices.Equal(tools, want) {
				t.Errorf("token org.tools = %v; want %v", tools, want)
			}
		})

		t.Run("refused", func(t *testing.T) {
			gone := meTeamOrg(t, env, "Gone org", [2]string{w.owner.UserID, "owner"})
			goneKey := wsCreateOrgKey(t, env, w.owner.Access, gone, map[string]any{"name": "Orphan", "role": "member"}).Str("api_key.secret")
			wsExchange(t, env, goneKey).Want(t, 200)
			meExec(t, env, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
			tamper := secret[:len(secret)-1] + "a"
			if strings.HasSuffix(secret, "a") {
				tamper = secret[:len(secret)-1] + "b"
			}
			wsRun(t, env, []wsCase{
				{name: "org soft-deleted", method: "POST", path: "/v1/auth/token", body: map[string]string{"api_key": goneKey}, wantStatus: 401},
				{name: "unknown key", method: "POST", path: "/v1/auth/token", body: map[string]string{"api_key": "svc_o_" + testenv.RandomHex(24)}, wantStatus: 401},
				{name: "key altered", method: "POST", path: "/v1/auth/token", body: map[string]string{"api_key": tamper}, wantStatus: 401},
				{name: "api_key missing", method: "POST", path: "/v1/auth/token", body: map[string]string{}, wantStatus: 400},
			})
		})

		t.Run("expired after 90 days", func(t *testing.T) {
			env.Clock.Advance(90*24*time.Hour - time.Minute)
			wsExchange(t, env, secret).Want(t, 200)
			env.Clock.Advance(2 * time.Minute)
			wsExchange(t, env, secret).Want(t, 401)
			var n int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE id = $1`, keyID).Scan(&n); err != nil || n != 1 {
				t.Errorf("key row count = %d (%v); want 1", n, err)
			}
		})
	})
}
