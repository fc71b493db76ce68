package web_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// TestWsTools covers the tool matrix (spec 2 Tool access, 4.4, section 8;
// CONTRACT §4: seven tools in canonical order, all enabled in a new org,
// an unknown tool is 400, team orgs only, org.tools.manage).
func TestWsTools(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		tools := "/v1/orgs/" + w.Org + "/tools"
		matrix := func(off ...string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				if got, want := toolMatrix(t, r), wantMatrix(off...); !slices.Equal(got, want) {
					t.Errorf("tools = %v; want %v", got, want)
				}
			}
		}
		put := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "PUT", Path: tools, Token: token, Body: body, Want: want, Check: check}
		}

		env.RunCases(t, []testenv.Case{
			{Name: "new team org: seven tools, all enabled", Method: "GET", Path: tools, Token: w.Member.Access, Want: 200, Check: matrix()},
			{Name: "personal org", Method: "GET", Path: "/v1/orgs/" + w.Owner.OrgID + "/tools", Token: w.Owner.Access, Want: 200, Check: matrix()},
			{Name: "list: stranger", Method: "GET", Path: tools, Token: w.Stranger.Access, Want: 404},
			{Name: "list: unknown org", Method: "GET", Path: "/v1/orgs/" + uuid.NewString() + "/tools", Token: w.Owner.Access, Want: 404},
			{Name: "list: no token", Method: "GET", Path: tools, Want: 401},

			put("owner disables sign", w.Owner.Access, map[string]any{"tool": "sign", "enabled": false}, 200, matrix("sign")),
			put("admin disables crm", w.Admin.Access, map[string]any{"tool": "crm", "enabled": false}, 200, matrix("sign", "crm")),
			put("disabling twice changes nothing", w.Owner.Access, map[string]any{"tool": "crm", "enabled": false}, 200, matrix("sign", "crm")),
			put("owner enables sign again", w.Owner.Access, map[string]any{"tool": "sign", "enabled": true}, 200, matrix("crm")),
			{Name: "GET shows the change", Method: "GET", Path: tools, Token: w.Billing.Access, Want: 200, Check: matrix("crm")},

			put("unknown tool", w.Owner.Access, map[string]any{"tool": "chat", "enabled": false}, 400, nil),
			put("tool name in another case", w.Owner.Access, map[string]any{"tool": "Tasks", "enabled": false}, 400, nil),
			put("tool missing", w.Owner.Access, map[string]any{"enabled": false}, 400, nil),
			put("enabled missing", w.Owner.Access, map[string]any{"tool": "tasks"}, 400, nil),
			put("enabled null", w.Owner.Access, map[string]any{"tool": "tasks", "enabled": nil}, 400, nil),
			put("body an array", w.Owner.Access, `[{"tool": "tasks", "enabled": false}]`, 400, nil),
			put("enabled not a boolean", w.Owner.Access, map[string]any{"tool": "tasks", "enabled": "no"}, 400, nil),
			put("member", w.Member.Access, map[string]any{"tool": "tasks", "enabled": false}, 403, nil),
			put("billing", w.Billing.Access, map[string]any{"tool": "tasks", "enabled": false}, 403, nil),
			put("stranger", w.Stranger.Access, map[string]any{"tool": "tasks", "enabled": false}, 404, nil),
			put("no token", "", map[string]any{"tool": "tasks", "enabled": false}, 401, nil),
			{Name: "personal org", Method: "PUT", Path: "/v1/orgs/" + w.Owner.OrgID + "/tools", Token: w.Owner.Access, Body: map[string]any{"tool": "tasks", "enabled": false}, Want: 403},
			{Name: "refusals changed nothing", Method: "GET", Path: tools, Token: w.Owner.Access, Want: 200, Check: matrix("crm")},
			{Name: "personal org unchanged", Method: "GET", Path: "/v1/orgs/" + w.Owner.OrgID + "/tools", Token: w.Owner.Access, Want: 200, Check: matrix()},
		})
	})
}

// TestWsToolsInTokens checks that tokens minted after a tool change carry
// the new tool list (spec 1.5, 5.2; 4.1 rule 5; CONTRACT §4 claims): by
// switch-org, refresh and key exchange, and GET /v1/auth/me.
func TestWsToolsInTokens(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		orgKey := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Robot", "role": "admin"}).Str("api_key.secret")
		userKey := env.CreateUserKey(t, w.Member.Access, map[string]any{"name": "Member key", "org_id": w.Org}).Str("api_key.secret")
		env.SetTool(t, w.Owner.Access, w.Org, "notes", false)
		env.SetTool(t, w.Owner.Access, w.Org, "forms", false)
		want := testenv.ToolsExcept("notes", "forms")

		// check compares the tools of an answer's org and of its token.
		check := func(t *testing.T, r *testenv.Resp, role string, want []string) {
			t.Helper()
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("answer org.tools = %v; want %v", r.Get("org.tools"), want)
			}
			id, gotRole, tools := testenv.TokenOrg(t, r.Str("access_token"))
			if id != w.Org || gotRole != role || !slices.Equal(tools, want) {
				t.Errorf("token org claim = {%s %s %v}; want {%s %s %v}", id, gotRole, tools, w.Org, role, want)
			}
		}

		var switched string
		t.Run("switch-org", func(t *testing.T) {
			r := env.Call(t, "POST", "/v1/auth/switch-org", w.Member.Access, map[string]string{"org_id": w.Org}).Want(t, 200)
			check(t, r, "member", want)
			switched = r.Str("access_token")
		})
		t.Run("auth/me", func(t *testing.T) {
			r := env.Call(t, "GET", "/v1/auth/me", switched, nil).Want(t, 200)
			if r.Str("org.id") != w.Org {
				t.Fatalf("me org = %v; want %s", r.Get("org"), w.Org)
			}
			if got := testenv.Strings(r.Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("me org.tools = %v; want %v", got, want)
			}
		})
		t.Run("refresh", func(t *testing.T) {
			// switch-org made the team org the default, so refresh scopes to it.
			r := env.Refresh(t, w.Member.Refresh).Want(t, 200)
			w.Member.Refresh = r.Str("refresh_token")
			check(t, r, "member", want)
		})
		t.Run("org key exchange", func(t *testing.T) {
			check(t, env.Exchange(t, orgKey).Want(t, 200), "admin", want)
		})
		t.Run("user key exchange", func(t *testing.T) {
			check(t, env.Exchange(t, userKey).Want(t, 200), "member", want)
		})
		t.Run("re-enabled tool is back in the next tokens", func(t *testing.T) {
			env.SetTool(t, w.Owner.Access, w.Org, "notes", true)
			want := testenv.ToolsExcept("forms")
			check(t, env.Exchange(t, orgKey).Want(t, 200), "admin", want)
			check(t, env.Call(t, "POST", "/v1/auth/switch-org", w.Member.Access, map[string]string{"org_id": w.Org}).Want(t, 200), "member", want)
			check(t, env.Refresh(t, w.Member.Refresh).Want(t, 200), "member", want)
			// GET /v1/auth/me reads live, even with the token minted earlier.
			if got := testenv.Strings(env.Call(t, "GET", "/v1/auth/me", switched, nil).Want(t, 200).Get("org.tools")); !slices.Equal(got, want) {
				t.Errorf("me org.tools = %v; want %v", got, want)
			}
		})
	})
}

// toolMatrix returns the tool matrix of an answer as "tool=enabled" strings
// in answer order, checking each row is exactly {tool, enabled}.
func toolMatrix(t testing.TB, r *testenv.Resp) []string {
	t.Helper()
	var out []string
	for i, row := range r.List(t, "tools") {
		testenv.CheckKeys(t, fmt.Sprintf("tools[%d]", i), row, "tool", "enabled")
		on, ok := row["enabled"].(bool)
		if !ok {
			t.Errorf("tools[%d].enabled = %#v; want a boolean", i, row["enabled"])
		}
		out = append(out, fmt.Sprintf("%v=%v", row["tool"], on))
	}
	return out
}

// wantMatrix is the expected matrix: every tool enabled except off.
func wantMatrix(off ...string) []string {
	out := make([]string, len(workspace.Tools))
	for i, tool := range workspace.Tools {
		out[i] = fmt.Sprintf("%s=%v", tool, !slices.Contains(off, tool))
	}
	return out
}
