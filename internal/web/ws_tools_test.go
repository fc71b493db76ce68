package web_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestWsTools covers the tool matrix (spec 2 Tool access, 4.4, section 8;
// CONTRACT §4: seven tools in canonical order, all enabled in a new org,
// an unknown tool is 400, team orgs only, org.tools.manage).
func TestWsTools(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		tools := "/v1/orgs/" + w.org + "/tools"
		matrix := func(off ...string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				if got, want := wsToolMatrix(t, r), wsMatrix(off...); !slices.Equal(got, want) {
					t.Errorf("tools = %v; want %v", got, want)
				}
			}
		}
		put := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) wsCase {
			return wsCase{name: name, method: "PUT", path: tools, token: token, body: body, wantStatus: want, wantBody: check}
		}

		wsRun(t, env, []wsCase{
			{name: "new team org: seven tools, all enabled", method: "GET", path: tools, token: w.member.Access, wantStatus: 200, wantBody: matrix()},
			{name: "personal org", method: "GET", path: "/v1/orgs/" + w.owner.OrgID + "/tools", token: w.owner.Access, wantStatus: 200, wantBody: matrix()},
			{name: "list: stranger", method: "GET", path: tools, token: w.stranger.Access, wantStatus: 404},
			{name: "list: unknown org", method: "GET", path: "/v1/orgs/" + uuid.NewString() + "/tools", token: w.owner.Access, wantStatus: 404},
			{name: "list: no token", method: "GET", path: tools, wantStatus: 401},

			put("owner disables sign", w.owner.Access, map[string]any{"tool": "sign", "enabled": false}, 200, matrix("sign")),
			put("admin disables crm", w.admin.Access, map[string]any{"tool": "crm", "enabled": false}, 200, matrix("sign", "crm")),
			put("disabling twice changes nothing", w.owner.Access, map[string]any{"tool": "crm", "enabled": false}, 200, matrix("sign", "crm")),
			put("owner enables sign again", w.owner.Access, map[string]any{"tool": "sign", "enabled": true}, 200, matrix("crm")),
			{name: "GET shows the change", method: "GET", path: tools, token: w.billing.Access, wantStatus: 200, wantBody: matrix("crm")},

			put("unknown tool", w.owner.Access, map[string]any{"tool": "chat", "enabled": false}, 400, nil),
			put("tool name in another case", w.owner.Access, map[string]any{"tool": "Tasks", "enabled": false}, 400, nil),
			put("tool missing", w.owner.Access, map[string]any{"enabled": false}, 400, nil),
			put("enabled missing", w.owner.Access, map[string]any{"tool": "tasks"}, 400, nil),
			put("enabled null", w.owner.Access, map[string]any{"tool": "tasks", "enabled": nil}, 400, nil),
			put("body an array", w.owner.Access, `[{"tool": "tasks", "enabled": false}]`, 400, nil),
			put("enabled not a boolean", w.owner.Access, map[string]any{"tool": "tasks", "enabled": "no"}, 400, nil),
			put("member", w.member.Access, map[string]any{"tool": "tasks", "enabled": false}, 403, nil),
			put("billing", w.billing.Access, map[string]any{"tool": "tasks", "enabled": false}, 403, nil),
			put("stranger", w.stranger.Access, map[string]any{"tool": "tasks", "enabled": false}, 404, nil),
			put("no token", "", map[string]any{"tool": "tasks", "enabled": false}, 401, nil),
			{name: "personal org", method: "PUT", path: "/v1/orgs/" + w.owner.OrgID + "/tools", token: w.owner.Access, body: map[string]any{"tool": "tasks", "enabled": false}, wantStatus: 403},
			{name: "refusals changed nothing", method: "GET", path: tools, token: w.owner.Access, wantStatus: 200, wantBody: matrix("crm")},
			{name: "personal org unchanged", method: "GET", path: "/v1/orgs/" + w.owner.OrgID + "/tools", token: w.owner.Access, wantStatus: 200, wantBody: matrix()},
		})
	})
}

// TestWsToolsInTokens checks that tokens minted after a tool change carry
// the new tool list (spec 1.5, 5.2; 4.1 rule 5; CONTRACT §4 claims): by
// switch-org, refresh and key exchange, and GET /v1/auth/me.
func TestWsToolsInTokens(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		orgKey := wsCreateOrgKey(t, env, w.owner.Access, w.org, map[string]any{"name": "Robot", "role": "admin"}).Str("api_key.secret")
		userKey := meCreateKey(t, env, w.member.Access, map[string]any{"name": "Member key", "org_id": w.org}).Str("api_key.secret")
		wsSetTool(t, env, w.owner.Access, w.org, "notes", false)
		wsSetTool(t, env, w.owner.Access, w.org, "forms", false)
		want := wsToolsExcept("notes", "forms")

		// check compares the tools of an answer's org and of its token.
		check := func(t *testing.T, r *testenv.Resp, role string, want []string) {
			t.Helper()
			if got := meStrings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("answer org.tools = %v; want %v", r.Get("org.tools"), want)
			}
			id, gotRole, tools := wsTokenOrg(t, r.Str("access_token"))
			if id != w.org || gotRole != role || !slices.Equal(tools, want) {
				t.Errorf("token org claim = {%s %s %v}; want {%s %s %v}", id, gotRole, tools, w.org, role, want)
			}
		}

		var switched string
		t.Run("switch-org", func(t *testing.T) {
			r := wsDo(t, env, "POST", "/v1/auth/switch-org", w.member.Access, map[string]string{"org_id": w.org}).Want(t, 200)
			check(t, r, "member", want)
			switched = r.Str("access_token")
		})
		t.Run("auth/me", func(t *testing.T) {
			r := wsDo(t, env, "GET", "/v1/auth/me", switched, nil).Want(t, 200)
			if r.Str("org.id") != w.org {
				t.Fatalf("me org = %v; want %s", r.Get("org"), w.org)
			}
			if got := meStrings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("me org.tools = %v; want %v", got, want)
			}
		})
		t.Run("refresh", func(t *testing.T) {
			// switch-org made the team org the default, so refresh scopes to it.
			r := signinRefresh(t, env, w.member.Refresh).Want(t, 200)
			w.member.Refresh = r.Str("refresh_token")
			check(t, r, "member", want)
		})
		t.Run("org key exchange", func(t *testing.T) {
			check(t, wsExchange(t, env, orgKey).Want(t, 200), "admin", want)
		})
		t.Run("user key exchange", func(t *testing.T) {
			check(t, wsExchange(t, env, userKey).Want(t, 200), "member", want)
		})
		t.Run("re-enabled tool is back in the next tokens", func(t *testing.T) {
			wsSetTool(t, env, w.owner.Access, w.org, "notes", true)
			want := wsToolsExcept("forms")
			check(t, wsExchange(t, env, orgKey).Want(t, 200), "admin", want)
			check(t, wsDo(t, env, "POST", "/v1/auth/switch-org", w.member.Access, map[string]string{"org_id": w.org}).Want(t, 200), "member", want)
			check(t, signinRefresh(t, env, w.member.Refresh).Want(t, 200), "member", want)
			// GET /v1/auth/me reads live, even with the token minted earlier.
			if got := meStrings(wsDo(t, env, "GET", "/v1/auth/me", switched, nil).Want(t, 200).Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("me org.tools = %v; want %v", got, want)
			}
		})
	})
}
