package mcp_test

import (
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

const missing = "00000000-0000-4000-8000-000000000000"

// TestMCPTasks runs every Tasks tool through the Go SDK's client and the
// Tasks API with the same request: the same answers and the same errors
// (not found, another workspace's issue, bad input).
func TestMCPTasks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		stranger, sorg := env.Team(t)
		steam := env.CreateTeam(t, stranger.Token, sorg, "Theirs")
		theirs := env.Do(t, "POST", "/tasks/v1/issues", stranger.Token, map[string]any{"teamId": steam, "title": "theirs"}).Want(t, 200).Str("issue.id")
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		api := owner.Token

		if names := toolNames(t, cs); len(names) != 19 || !slices.Contains(names, "tasks_list_teams") || !slices.Contains(names, "sign_duplicate_document") {
			t.Fatalf("tools = %v", names)
		}
		teams := call(t, cs, "tasks_list_teams", nil)
		if got := generic(t, teams.StructuredContent).(map[string]any)["teams"].([]any); len(got) != 1 || got[0].(map[string]any)["id"] != team {
			t.Fatalf("teams = %v", got)
		}
		created := call(t, cs, "tasks_create_issue", map[string]any{"teamId": team, "title": "From MCP", "priority": 2})
		if created.IsError {
			t.Fatalf("create: %s", text(created))
		}
		id := generic(t, created.StructuredContent).(map[string]any)["issue"].(map[string]any)["id"].(string)
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": id}, "GET", "/tasks/v1/issues/"+id, nil)
		same(t, env, cs, api, "tasks_list_issues", nil, "GET", "/tasks/v1/issues", nil)
		same(t, env, cs, api, "tasks_list_issues", map[string]any{"teamId": team}, "GET", "/tasks/v1/issues?teamId="+team, nil)
		// Errors: not found, another workspace's issue, bad input.
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": missing}, "GET", "/tasks/v1/issues/"+missing, nil)
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": theirs}, "GET", "/tasks/v1/issues/"+theirs, nil)
		same(t, env, cs, api, "tasks_update_issue", map[string]any{"id": theirs, "title": "mine"}, "PATCH", "/tasks/v1/issues/"+theirs, map[string]any{"title": "mine"})
		same(t, env, cs, api, "tasks_delete_issue", map[string]any{"id": theirs}, "DELETE", "/tasks/v1/issues/"+theirs, nil)
		same(t, env, cs, api, "tasks_create_issue", map[string]any{"teamId": team, "title": 5}, "POST", "/tasks/v1/issues", map[string]any{"teamId": team, "title": 5})
		same(t, env, cs, api, "tasks_create_issue", map[string]any{"title": "no team"}, "POST", "/tasks/v1/issues", map[string]any{"title": "no team"})
		same(t, env, cs, api, "tasks_create_issue", map[string]any{"teamId": steam, "title": "x"}, "POST", "/tasks/v1/issues", map[string]any{"teamId": steam, "title": "x"})
		same(t, env, cs, api, "tasks_update_issue", map[string]any{"id": id, "priority": "high"}, "PATCH", "/tasks/v1/issues/"+id, map[string]any{"priority": "high"})
		same(t, env, cs, api, "tasks_list_issues", map[string]any{"deleted": "yes"}, "GET", "/tasks/v1/issues?deleted=yes", nil)
		if r := call(t, cs, "tasks_get_issue", nil); !r.IsError || text(r) != "id is required" {
			t.Fatalf("no id: %v %q", r.IsError, text(r))
		}
		if r := call(t, cs, "tasks_get_issue", `{"id": "a\u0000"}`); !r.IsError || text(r) != "strings must not contain NUL characters (\\u0000)" {
			t.Fatalf("NUL: %v %q", r.IsError, text(r))
		}
		// Writes, each read back through the API.
		updated := call(t, cs, "tasks_update_issue", map[string]any{"id": id, "title": "Renamed", "description": nil})
		if updated.IsError {
			t.Fatalf("update: %s", text(updated))
		}
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": id}, "GET", "/tasks/v1/issues/"+id, nil)
		if r := call(t, cs, "tasks_delete_issue", map[string]any{"id": id}); r.IsError || text(r) != "issue deleted" {
			t.Fatalf("delete: %v %q", r.IsError, text(r))
		}
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": id}, "GET", "/tasks/v1/issues/"+id, nil)
		same(t, env, cs, api, "tasks_list_issues", map[string]any{"deleted": true}, "GET", "/tasks/v1/issues?deleted=true", nil)
		if r := call(t, cs, "tasks_restore_issue", map[string]any{"id": id}); r.IsError {
			t.Fatalf("restore: %s", text(r))
		}
		same(t, env, cs, api, "tasks_get_issue", map[string]any{"id": id}, "GET", "/tasks/v1/issues/"+id, nil)
		same(t, env, cs, api, "tasks_restore_issue", map[string]any{"id": id}, "POST", "/tasks/v1/issues/"+id+"/restore", nil)
		// The audit log names the MCP writes as the API's.
		if n := len(env.Audit(t, owner.Token, org, "action=tasks.issue.created")); n != 1 {
			t.Fatalf("audit issue.created = %d", n)
		}
	})
}

// TestMCPListPages checks the bounded lists: limit and the cursors.
func TestMCPListPages(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		for _, title := range []string{"a", "b", "c"} {
			env.Do(t, "POST", "/tasks/v1/issues", owner.Token, map[string]any{"teamId": team, "title": title}).Want(t, 200)
		}
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		var seen []any
		args := map[string]any{"limit": 2}
		for range 3 {
			r := call(t, cs, "tasks_list_issues", args)
			out := generic(t, r.StructuredContent).(map[string]any)
			seen = append(seen, out["issues"].([]any)...)
			next, _ := out["nextCursor"].(string)
			if next == "" {
				break
			}
			args = map[string]any{"limit": 2, "cursor": next}
		}
		all := env.Do(t, "GET", "/tasks/v1/issues", owner.Token, nil).Want(t, 200).JSON()["issues"].([]any)
		if len(seen) != 3 || len(all) != 3 {
			t.Fatalf("paged %d issues; the API lists %d", len(seen), len(all))
		}
		for _, bad := range []map[string]any{{"limit": 0}, {"limit": 1000}, {"cursor": "nope!"}} {
			if r := call(t, cs, "tasks_list_issues", bad); !r.IsError {
				t.Fatalf("%v: not refused", bad)
			}
		}
	})
}
