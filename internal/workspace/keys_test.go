package workspace_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// checkOrgKey checks an org API key record (CONTRACT §3); withSecret
// tells whether it is the creation answer, the only one with the secret.
func checkOrgKey(t *testing.T, k map[string]any, org, role string, tools []string, withSecret bool) {
	t.Helper()
	fields := []string{"id", "name", "kind", "org_id", "role", "tools", "prefix", "expires_at", "created_at", "last_used_at"}
	if withSecret {
		fields = append(fields, "secret")
	}
	testenv.CheckKeys(t, "api_key", k, fields...)
	if id, _ := k["id"].(string); !testenv.IsUUID(id) {
		t.Errorf("api_key.id = %#v; want a uuid", k["id"])
	}
	if k["kind"] != "org" || k["org_id"] != org || k["role"] != role {
		t.Errorf("api_key kind, org_id, role = %v, %v, %v; want org, %s, %s", k["kind"], k["org_id"], k["role"], org, role)
	}
	if got := testenv.Strings(k["tools"]); !slices.Equal(got, tools) {
		t.Errorf("api_key.tools = %v; want %v", k["tools"], tools)
	}
	testenv.Time(t, "api_key.created_at", k["created_at"])
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
		w := env.NewWorld(t)
		keys := "/v1/orgs/" + w.Org + "/api-keys"
		// A token from an API key is not a full session: one from a user
		// key of the owner, one from an admin-role org key.
		ownerKeyToken := env.Exchange(t, env.CreateUserKey(t, w.Owner.Access, map[string]any{"name": "Owner key", "org_id": w.Org}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		adminBot := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Admin bot", "role": "admin"})
		botToken := env.Exchange(t, adminBot.Str("api_key.secret")).Want(t, 200).Str("access_token")
		env.Clock.Advance(time.Second) // every key below is newer than the bot
		created := map[string]string{} // key name → key id
		createdOK := func(role string, tools []string, expiresIn time.Duration) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				k := r.Obj(t, "api_key")
				checkOrgKey(t, k, w.Org, role, tools, true)
				if expiresIn == 0 {
					if k["expires_at"] != nil {
						t.Errorf("expires_at = %v; want null (never)", k["expires_at"])
					}
				} else {
					testenv.Near(t, "expires_at", testenv.Time(t, "expires_at", k["expires_at"]), env.Clock.Now().Add(expiresIn))
				}
				name, _ := k["name"].(string)
				created[name], _ = k["id"].(string)
				env.Clock.Advance(time.Second) // keeps "newest first" observable
			}
		}
		year := 365 * 24 * time.Hour
		create := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "POST", Path: keys, Token: token, Body: body, Want: want, Check: check}
		}

		t.Run("create", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				create("role member", w.Owner.Access, map[string]any{"name": "CI bot", "role": "member"}, 200, createdOK("member", workspace.Tools, year)),
				create("role billing", w.Owner.Access, map[string]any{"name": "Invoices", "role": "billing", "expires_in_days": nil}, 200, createdOK("billing", workspace.Tools, year)),
				create("role admin by an admin", w.Admin.Access, map[string]any{"name": "Ops", "role": "admin", "expires_in_days": 90}, 200, createdOK("admin", workspace.Tools, 90*24*time.Hour)),
				create("never expires", w.Owner.Access, map[string]any{"name": "Forever", "role": "member", "expires_in_days": 0}, 200, createdOK("member", workspace.Tools, 0)),
				create("tool allowlist", w.Owner.Access, map[string]any{"name": "Tasks only", "role": "member", "tools": []string{"tasks", "crm"}}, 200, createdOK("member", []string{"tasks", "crm"}, year)),
				create("role owner", w.Owner.Access, map[string]any{"name": "Usurper", "role": "owner"}, 400, nil),
				create("role unknown", w.Owner.Access, map[string]any{"name": "Root", "role": "root"}, 400, nil),
				create("unknown tool", w.Owner.Access, map[string]any{"name": "Chatty", "role": "member", "tools": []string{"tasks", "chat"}}, 400, nil),
				create("tools not strings", w.Owner.Access, map[string]any{"name": "Odd", "role": "member", "tools": []int{1}}, 400, nil),
				create("name of two characters", w.Owner.Access, map[string]any{"name": "ab", "role": "member", "expires_in_days": 3650}, 200, createdOK("member", workspace.Tools, 3650*24*time.Hour)),
				create("name of one character", w.Owner.Access, map[string]any{"name": "x", "role": "member"}, 400, nil),
				create("name missing", w.Owner.Access, map[string]any{"role": "member"}, 400, nil),
				create("negative expiry", w.Owner.Access, map[string]any{"name": "Past", "role": "member", "expires_in_days": -1}, 400, nil),
				create("expiry not an integer", w.Owner.Access, map[string]any{"name": "Half", "role": "member", "expires_in_days": 1.5}, 400, nil),
				create("expiry as a string", w.Owner.Access, map[string]any{"name": "Text", "role": "member", "expires_in_days": "90"}, 400, nil),
				create("expiry past ten years", w.Owner.Access, map[string]any{"name": "Far", "role": "member", "expires_in_days": 3651}, 400, nil),
				create("member", w.Member.Access, map[string]any{"name": "Mine", "role": "member"}, 403, nil),
				create("billing", w.Billing.Access, map[string]any{"name": "Mine", "role": "member"}, 403, nil),
				create("stranger", w.Stranger.Access, map[string]any{"name": "Mine", "role": "member"}, 404, nil),
				create("user key token", ownerKeyToken, map[string]any{"name": "Nested", "role": "member"}, 403, nil),
				create("admin org key token", botToken, map[string]any{"name": "Nested", "role": "member"}, 403, nil),
				create("no token", "", map[string]any{"name": "Anon", "role": "member"}, 401, nil),
				{Name: "personal org", Method: "POST", Path: "/v1/orgs/" + w.Owner.OrgID + "/api-keys", Token: w.Owner.Access, Body: map[string]any{"name": "Solo", "role": "member"}, Want: 403},
			})
		})

		t.Run("list", func(t *testing.T) {
			r := env.Call(t, "GET", keys, w.Admin.Access, nil).Want(t, 200)
			rows := r.List(t, "api_keys")
			var ids []string
			for _, k := range rows {
				if _, ok := k["secret"]; ok {
					t.Errorf("listed key %v has a secret field", k["id"])
				}
				role, _ := k["role"].(string)
				checkOrgKey(t, k, w.Org, role, testenv.Strings(k["tools"]), false)
				id, _ := k["id"].(string)
				ids = append(ids, id)
			}
			// Newest first: the six created above in reverse, then the bot.
			want := []string{created["ab"], created["Tasks only"], created["Forever"], created["Ops"], created["Invoices"], created["CI bot"], adminBot.Str("api_key.id")}
			if !slices.Equal(ids, want) {
				t.Errorf("listed key ids = %v; want newest first %v", ids, want)
			}
			env.RunCases(t, []testenv.Case{
				{Name: "member", Method: "GET", Path: keys, Token: w.Member.Access, Want: 403},
				{Name: "billing", Method: "GET", Path: keys, Token: w.Billing.Access, Want: 403},
				{Name: "stranger", Method: "GET", Path: keys, Token: w.Stranger.Access, Want: 404},
				{Name: "user key token", Method: "GET", Path: keys, Token: ownerKeyToken, Want: 403},
				{Name: "admin org key token", Method: "GET", Path: keys, Token: botToken, Want: 403},
				{Name: "no token", Method: "GET", Path: keys, Want: 401},
				{Name: "personal org has none", Method: "GET", Path: "/v1/orgs/" + w.Owner.OrgID + "/api-keys", Token: w.Owner.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						if got := r.List(t, "api_keys"); len(got) != 0 {
							t.Errorf("api_keys = %v; want [] (user keys are not org keys)", got)
						}
					}},
			})
		})

		t.Run("delete", func(t *testing.T) {
			victim := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Short lived", "role": "member"})
			id, secret := victim.Str("api_key.id"), victim.Str("api_key.secret")
			env.Exchange(t, secret).Want(t, 200)
			other := env.TeamOrg(t, "Other org", [2]string{w.Owner.UserID, "owner"})
			otherKey := env.CreateOrgKey(t, w.Owner.Access, other, map[string]any{"name": "Other bot", "role": "member"}).Str("api_key.id")
			userKey := env.CreateUserKey(t, w.Owner.Access, map[string]any{"name": "Owner key 2", "org_id": w.Org}).Str("api_key.id")
			del := func(name, token, id string, want int) testenv.Case {
				return testenv.Case{Name: name, Method: "DELETE", Path: keys + "/" + id, Token: token, Want: want}
			}
			env.RunCases(t, []testenv.Case{
				del("member", w.Member.Access, id, 403),
				del("stranger", w.Stranger.Access, id, 404),
				del("user key token", ownerKeyToken, id, 403),
				del("admin org key token", botToken, id, 403),
				del("no token", "", id, 401),
				del("another org's key", w.Owner.Access, otherKey, 404),
				del("a user key of this org", w.Owner.Access, userKey, 404),
				del("unknown id", w.Owner.Access, uuid.NewString(), 404),
				del("malformed id", w.Owner.Access, "svc_o_nope", 404),
				{Name: "owner", Method: "DELETE", Path: keys + "/" + id, Token: w.Owner.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { testenv.WantMessage(t, r) }},
				del("again", w.Owner.Access, id, 404),
				{Name: "exchange of the revoked key", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": secret}, Want: 401},
			})
			for _, k := range env.Call(t, "GET", keys, w.Owner.Access, nil).Want(t, 200).List(t, "api_keys") {
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
		w := env.NewWorld(t)
		k := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Billing bot", "role": "billing", "tools": []string{"tasks", "notes", "crm"}, "expires_in_days": 90})
		secret, keyID := k.Str("api_key.secret"), k.Str("api_key.id")

		t.Run("token with the key's role and tools", func(t *testing.T) {
			now := env.Clock.Now()
			r := env.Exchange(t, secret).Want(t, 200)
			if _, ok := r.JSON()["refresh_token"]; ok {
				t.Errorf("answer has a refresh_token: %s", r.Body)
			}
			if r.Str("org.id") != w.Org || r.Str("org.role") != "billing" {
				t.Errorf("org = %v; want id %s role billing", r.Get("org"), w.Org)
			}
			want := []string{"tasks", "notes", "crm"}
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("org.tools = %v; want %v", got, want)
			}
			exp := testenv.Time(t, "expires_at", r.Get("expires_at"))
			if !exp.After(now) || exp.After(now.Add(time.Hour+2*time.Second)) {
				t.Errorf("expires_at = %s; want shortly after %s", exp, now)
			}
			c := testenv.Claims(t, r.Str("access_token"))
			if c["via"] != "api_key" {
				t.Errorf("via = %v; want api_key", c["via"])
			}
			if _, ok := c["sid"]; ok {
				t.Errorf("claims have sid %v; want none for key exchange", c["sid"])
			}
			if id, role, tools := testenv.TokenOrg(t, r.Str("access_token")); id != w.Org || role != "billing" || !slices.Equal(tools, want) {
				t.Errorf("org claim = {%s %s %v}; want {%s billing %v}", id, role, tools, w.Org, want)
			}
			// The key acts in its workspace with its role, and nowhere else.
			tok := r.Str("access_token")
			env.Call(t, "GET", "/v1/orgs/"+w.Org+"/tools", tok, nil).Want(t, 200)
			env.Call(t, "PUT", "/v1/orgs/"+w.Org+"/tools", tok, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 403)
			env.Call(t, "GET", "/v1/orgs/"+w.Owner.OrgID+"/tools", tok, nil).Want(t, 404)
			env.Call(t, "POST", "/v1/auth/switch-org", tok, map[string]string{"org_id": w.Owner.OrgID}).Want(t, 403)

			// The list shows when the key was last used.
			for _, k := range env.Call(t, "GET", "/v1/orgs/"+w.Org+"/api-keys", w.Owner.Access, nil).Want(t, 200).List(t, "api_keys") {
				if k["id"] == keyID {
					testenv.Near(t, "last_used_at", testenv.Time(t, "last_used_at", k["last_used_at"]), now)
				}
			}
		})

		t.Run("disabling a tool removes it from the next exchange", func(t *testing.T) {
			env.SetTool(t, w.Owner.Access, w.Org, "notes", false)
			r := env.Exchange(t, secret).Want(t, 200)
			want := []string{"tasks", "crm"}
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("org.tools = %v; want %v", got, want)
			}
			if _, _, tools := testenv.TokenOrg(t, r.Str("access_token")); !slices.Equal(tools, want) {
				t.Errorf("token org.tools = %v; want %v", tools, want)
			}
		})

		t.Run("refused", func(t *testing.T) {
			gone := env.TeamOrg(t, "Gone org", [2]string{w.Owner.UserID, "owner"})
			goneKey := env.CreateOrgKey(t, w.Owner.Access, gone, map[string]any{"name": "Orphan", "role": "member"}).Str("api_key.secret")
			env.Exchange(t, goneKey).Want(t, 200)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
			tamper := secret[:len(secret)-1] + "a"
			if strings.HasSuffix(secret, "a") {
				tamper = secret[:len(secret)-1] + "b"
			}
			env.RunCases(t, []testenv.Case{
				{Name: "org soft-deleted", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": goneKey}, Want: 401},
				{Name: "unknown key", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": "svc_o_" + testenv.RandomHex(24)}, Want: 401},
				{Name: "key altered", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": tamper}, Want: 401},
				{Name: "api_key missing", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{}, Want: 400},
			})
		})

		t.Run("expired after 90 days", func(t *testing.T) {
			env.Clock.Advance(90*24*time.Hour - time.Minute)
			env.Exchange(t, secret).Want(t, 200)
			env.Clock.Advance(2 * time.Minute)
			env.Exchange(t, secret).Want(t, 401)
			var n int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE id = $1`, keyID).Scan(&n); err != nil || n != 1 {
				t.Errorf("key row count = %d (%v); want 1", n, err)
			}
		})
	})
}
