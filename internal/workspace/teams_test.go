package workspace_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// checkTeam checks a Team record (CONTRACT §3).
func checkTeam(t *testing.T, tm map[string]any, name string, count int, myRole any) {
	t.Helper()
	testenv.CheckKeys(t, "team", tm, "id", "name", "description", "member_count", "my_role", "created_at")
	if id, _ := tm["id"].(string); !testenv.IsUUID(id) {
		t.Errorf("team.id = %#v; want a uuid", tm["id"])
	}
	if tm["name"] != name {
		t.Errorf("team.name = %#v; want %q", tm["name"], name)
	}
	if _, ok := tm["description"].(string); !ok {
		t.Errorf("team.description = %#v; want a string", tm["description"])
	}
	if tm["member_count"] != float64(count) {
		t.Errorf("team.member_count = %#v; want %d", tm["member_count"], count)
	}
	if tm["my_role"] != myRole {
		t.Errorf("team.my_role = %#v; want %#v", tm["my_role"], myRole)
	}
	testenv.Time(t, "team.created_at", tm["created_at"])
}

// TestWsTeams covers list, create, rename and delete of teams (spec 4.4,
// section 3 Team row, section 8 name length; CONTRACT §3 Team, §4 team orgs
// only).
func TestWsTeams(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		other := env.TeamOrg(t, "Other org", [2]string{w.Owner.UserID, "owner"})
		otherTeam := env.CreateTeam(t, w.Owner.Access, other, "Elsewhere")
		teams := "/v1/orgs/" + w.Org + "/teams"
		var team string // created by the plain member, who leads it

		t.Run("list", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				{Name: "personal org has none", Method: "GET", Path: "/v1/orgs/" + w.Owner.OrgID + "/teams", Token: w.Owner.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						if got := r.List(t, "teams"); len(got) != 0 {
							t.Errorf("teams = %v; want []", got)
						}
					}},
				{Name: "new team org has none", Method: "GET", Path: teams, Token: w.Member.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						if got := r.List(t, "teams"); len(got) != 0 {
							t.Errorf("teams = %v; want []", got)
						}
					}},
				{Name: "stranger", Method: "GET", Path: teams, Token: w.Stranger.Access, Want: 404},
				{Name: "unknown org", Method: "GET", Path: "/v1/orgs/" + uuid.NewString() + "/teams", Token: w.Owner.Access, Want: 404},
				{Name: "no token", Method: "GET", Path: teams, Want: 401},
			})
		})

		t.Run("create", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				{Name: "plain member", Method: "POST", Path: teams, Token: w.Member.Access, Body: map[string]string{"name": "Platform", "description": "Keeps the lights on"}, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						tm := r.Obj(t, "team")
						checkTeam(t, tm, "Platform", 1, "lead")
						if tm["description"] != "Keeps the lights on" {
							t.Errorf("team.description = %#v; want %q", tm["description"], "Keeps the lights on")
						}
						team, _ = tm["id"].(string)
					}},
				{Name: "billing member", Method: "POST", Path: teams, Token: w.Billing.Access, Body: map[string]string{"name": "Money"}, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { checkTeam(t, r.Obj(t, "team"), "Money", 1, "lead") }},
				{Name: "name of two characters", Method: "POST", Path: teams, Token: w.Admin.Access, Body: map[string]string{"name": "QA"}, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { checkTeam(t, r.Obj(t, "team"), "QA", 1, "lead") }},
				{Name: "name of one character", Method: "POST", Path: teams, Token: w.Owner.Access, Body: map[string]string{"name": "x"}, Want: 400},
				{Name: "name of one character after trimming", Method: "POST", Path: teams, Token: w.Owner.Access, Body: map[string]string{"name": "  x  "}, Want: 400},
				{Name: "name missing", Method: "POST", Path: teams, Token: w.Owner.Access, Body: map[string]string{"description": "no name"}, Want: 400},
				{Name: "empty body", Method: "POST", Path: teams, Token: w.Owner.Access, Want: 400},
				{Name: "malformed JSON", Method: "POST", Path: teams, Token: w.Owner.Access, Body: `{"name": "Broken"`, Want: 400},
				{Name: "name not a string", Method: "POST", Path: teams, Token: w.Owner.Access, Body: map[string]any{"name": 42}, Want: 400},
				{Name: "personal org", Method: "POST", Path: "/v1/orgs/" + w.Owner.OrgID + "/teams", Token: w.Owner.Access, Body: map[string]string{"name": "Solo"}, Want: 403},
				{Name: "stranger", Method: "POST", Path: teams, Token: w.Stranger.Access, Body: map[string]string{"name": "Intruders"}, Want: 404},
				{Name: "no token", Method: "POST", Path: teams, Body: map[string]string{"name": "Anon"}, Want: 401},
			})
			if team == "" {
				t.Fatal("the member's team was not created")
			}
		})

		t.Run("list shows my_role and member_count", func(t *testing.T) {
			got := env.Teams(t, w.Owner.Access, w.Org)
			if len(got) != 3 {
				t.Fatalf("owner sees %d teams %v; want 3", len(got), got)
			}
			checkTeam(t, got[team], "Platform", 1, nil)
			checkTeam(t, env.Teams(t, w.Member.Access, w.Org)[team], "Platform", 1, "lead")
			env.Call(t, "POST", teams+"/"+team+"/members", w.Member.Access, map[string]string{"user_id": w.Admin.UserID, "role": "member"}).Want(t, 200)
			checkTeam(t, env.Teams(t, w.Admin.Access, w.Org)[team], "Platform", 2, "member")
			checkTeam(t, env.Teams(t, w.Billing.Access, w.Org)[team], "Platform", 2, nil)
		})

		t.Run("patch", func(t *testing.T) {
			path := teams + "/" + team
			renamed := func(name string) func(t *testing.T, r *testenv.Resp) {
				return func(t *testing.T, r *testenv.Resp) {
					t.Helper()
					testenv.WantMessage(t, r)
					if _, ok := r.JSON()["team"]; ok {
						t.Errorf("PATCH answered %s; want a Message, not the team", r.Body)
					}
					if got := env.Teams(t, w.Owner.Access, w.Org)[team]["name"]; got != name {
						t.Errorf("team name after PATCH = %#v; want %q", got, name)
					}
				}
			}
			env.RunCases(t, []testenv.Case{
				{Name: "team lead", Method: "PATCH", Path: path, Token: w.Member.Access, Body: map[string]string{"name": "Platform Ops"}, Want: 200, Check: renamed("Platform Ops")},
				{Name: "admin not on the team", Method: "PATCH", Path: path, Token: w.Admin.Access, Body: map[string]string{"name": "Platform Admin"}, Want: 200, Check: renamed("Platform Admin")},
				{Name: "owner not on the team", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"name": "Platform"}, Want: 200, Check: renamed("Platform")},
				{Name: "description only", Method: "PATCH", Path: path, Token: w.Member.Access, Body: map[string]string{"description": "New words"}, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						if got := env.Teams(t, w.Owner.Access, w.Org)[team]; got["description"] != "New words" || got["name"] != "Platform" {
							t.Errorf("team after PATCH = %v; want name Platform, description %q", got, "New words")
						}
					}},
				{Name: "billing, not on the team", Method: "PATCH", Path: path, Token: w.Billing.Access, Body: map[string]string{"name": "Hijacked"}, Want: 403},
				{Name: "name of two characters", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"name": "PL"}, Want: 200, Check: renamed("PL")},
				{Name: "name back", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"name": "Platform"}, Want: 200, Check: renamed("Platform")},
				{Name: "empty patch", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{}, Want: 400},
				{Name: "no body", Method: "PATCH", Path: path, Token: w.Owner.Access, Want: 400},
				{Name: "name of one character", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"name": "x"}, Want: 400},
				{Name: "unknown team", Method: "PATCH", Path: teams + "/" + uuid.NewString(), Token: w.Owner.Access, Body: map[string]string{"name": "Ghost"}, Want: 404},
				{Name: "malformed team id", Method: "PATCH", Path: teams + "/not-a-team", Token: w.Owner.Access, Body: map[string]string{"name": "Ghost"}, Want: 404},
				{Name: "team of another org under this org", Method: "PATCH", Path: teams + "/" + otherTeam, Token: w.Owner.Access, Body: map[string]string{"name": "Moved"}, Want: 404},
				{Name: "stranger", Method: "PATCH", Path: path, Token: w.Stranger.Access, Body: map[string]string{"name": "Intruders"}, Want: 404},
				{Name: "no token", Method: "PATCH", Path: path, Body: map[string]string{"name": "Anon"}, Want: 401},
			})
		})

		t.Run("plain team member is refused", func(t *testing.T) {
			// The admin is a plain member of the team but holds
			// org.teams.manage; the billing member gets a plain team seat
			// and no permission.
			env.Call(t, "POST", teams+"/"+team+"/members", w.Member.Access, map[string]string{"user_id": w.Billing.UserID, "role": "member"}).Want(t, 200)
			env.RunCases(t, []testenv.Case{
				{Name: "rename", Method: "PATCH", Path: teams + "/" + team, Token: w.Billing.Access, Body: map[string]string{"name": "Hijacked"}, Want: 403},
				{Name: "delete", Method: "DELETE", Path: teams + "/" + team, Token: w.Billing.Access, Want: 403},
			})
		})

		t.Run("delete", func(t *testing.T) {
			doomed := env.CreateTeam(t, w.Owner.Access, w.Org, "Doomed")
			env.RunCases(t, []testenv.Case{
				{Name: "member not on the team", Method: "DELETE", Path: teams + "/" + doomed, Token: w.Member.Access, Want: 403},
				{Name: "personal org", Method: "DELETE", Path: "/v1/orgs/" + w.Owner.OrgID + "/teams/" + doomed, Token: w.Owner.Access, Want: 403},
				{Name: "team of another org under this org", Method: "DELETE", Path: teams + "/" + otherTeam, Token: w.Owner.Access, Want: 404},
				{Name: "stranger", Method: "DELETE", Path: teams + "/" + doomed, Token: w.Stranger.Access, Want: 404},
				{Name: "admin", Method: "DELETE", Path: teams + "/" + doomed, Token: w.Admin.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { testenv.WantMessage(t, r) }},
				{Name: "team lead", Method: "DELETE", Path: teams + "/" + team, Token: w.Member.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { testenv.WantMessage(t, r) }},
				{Name: "deleted team: again", Method: "DELETE", Path: teams + "/" + team, Token: w.Owner.Access, Want: 404},
				{Name: "deleted team: patch", Method: "PATCH", Path: teams + "/" + team, Token: w.Owner.Access, Body: map[string]string{"name": "Revived"}, Want: 404},
				{Name: "deleted team: members", Method: "GET", Path: teams + "/" + team + "/members", Token: w.Owner.Access, Want: 404},
				{Name: "deleted team: add member", Method: "POST", Path: teams + "/" + team + "/members", Token: w.Owner.Access, Body: map[string]string{"user_id": w.Owner.UserID, "role": "lead"}, Want: 404},
			})
			got := env.Teams(t, w.Owner.Access, w.Org)
			if _, ok := got[team]; ok {
				t.Errorf("teams list still shows deleted team %s: %v", team, got)
			}
			if _, ok := got[doomed]; ok {
				t.Errorf("teams list still shows deleted team %s: %v", doomed, got)
			}
			if len(got) != 2 {
				t.Errorf("teams after deletes = %v; want the billing member's and the admin's", got)
			}
			// Soft delete: the row stays, marked deleted.
			var n int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM teams WHERE id = $1 AND deleted_at IS NOT NULL`, team).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("rows of team %s with deleted_at set = %d; want 1 (soft delete)", team, n)
			}
		})
	})
}

// TestWsTeamMembers covers the team directory and team membership changes
// (spec 4.4; section 7: adding a non-member of the org is 400, not 404).
func TestWsTeamMembers(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		team := env.CreateTeam(t, w.Member.Access, w.Org, "Platform") // the member leads it
		other := env.TeamOrg(t, "Other org", [2]string{w.Owner.UserID, "owner"})
		otherTeam := env.CreateTeam(t, w.Owner.Access, other, "Elsewhere")
		members := "/v1/orgs/" + w.Org + "/teams/" + team + "/members"
		set := func(token, user, role string, want int) testenv.Case {
			return testenv.Case{Method: "POST", Path: members, Token: token, Body: map[string]string{"user_id": user, "role": role}, Want: want}
		}
		named := func(name string, c testenv.Case) testenv.Case { c.Name = name; return c }

		t.Run("list", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				{Name: "any org member", Method: "GET", Path: members, Token: w.Billing.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						rows := r.List(t, "members")
						if len(rows) != 1 {
							t.Fatalf("members = %v; want the lead only", rows)
						}
						m := rows[0]
						testenv.CheckKeys(t, "member row", m, "user_id", "name", "email", "avatar_url", "role", "joined_at")
						if m["user_id"] != w.Member.UserID || m["role"] != "lead" || m["email"] != w.Member.Email || m["name"] != w.Member.Name {
							t.Errorf("member row = %v; want user %s (%s, %s) as lead", m, w.Member.UserID, w.Member.Email, w.Member.Name)
						}
						if _, ok := m["avatar_url"].(string); !ok {
							t.Errorf("avatar_url = %#v; want a string", m["avatar_url"])
						}
						testenv.Time(t, "joined_at", m["joined_at"])
					}},
				{Name: "stranger", Method: "GET", Path: members, Token: w.Stranger.Access, Want: 404},
				{Name: "unknown team", Method: "GET", Path: "/v1/orgs/" + w.Org + "/teams/" + uuid.NewString() + "/members", Token: w.Owner.Access, Want: 404},
				{Name: "team of another org under this org", Method: "GET", Path: "/v1/orgs/" + w.Org + "/teams/" + otherTeam + "/members", Token: w.Owner.Access, Want: 404},
				{Name: "no token", Method: "GET", Path: members, Want: 401},
			})
		})

		t.Run("add", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				named("lead adds an org member", set(w.Member.Access, w.Billing.UserID, "member", 200)),
				named("target not an org member", set(w.Member.Access, w.Stranger.UserID, "member", 400)),
				named("target does not exist", set(w.Member.Access, uuid.NewString(), "member", 400)),
				named("target id malformed", set(w.Member.Access, "someone", "member", 400)),
				named("role owner", set(w.Member.Access, w.Admin.UserID, "owner", 400)),
				named("role unknown", set(w.Member.Access, w.Admin.UserID, "boss", 400)),
				{Name: "user_id missing", Method: "POST", Path: members, Token: w.Member.Access, Body: map[string]string{"role": "member"}, Want: 400},
				named("plain team member", set(w.Billing.Access, w.Admin.UserID, "member", 403)),
				named("org member not on the team", set(w.Admin.Access, w.Owner.UserID, "member", 200)), // admin holds org.teams.manage
				named("stranger", set(w.Stranger.Access, w.Stranger.UserID, "member", 404)),
				{Name: "unknown team", Method: "POST", Path: "/v1/orgs/" + w.Org + "/teams/" + uuid.NewString() + "/members", Token: w.Owner.Access, Body: map[string]string{"user_id": w.Owner.UserID, "role": "member"}, Want: 404},
				{Name: "no token", Method: "POST", Path: members, Body: map[string]string{"user_id": w.Owner.UserID, "role": "member"}, Want: 401},
			})
			want := map[string]string{w.Member.UserID: "lead", w.Billing.UserID: "member", w.Owner.UserID: "member"}
			if got := env.TeamMembers(t, w.Owner.Access, w.Org, team); !maps.Equal(got, want) {
				t.Errorf("team members = %v; want %v", got, want)
			}
			if got := env.Teams(t, w.Owner.Access, w.Org)[team]["member_count"]; got != float64(3) {
				t.Errorf("member_count = %v; want 3", got)
			}
		})

		t.Run("upsert changes the role", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				named("member to lead", set(w.Member.Access, w.Owner.UserID, "lead", 200)),
				named("same role again", set(w.Member.Access, w.Owner.UserID, "lead", 200)),
			})
			want := map[string]string{w.Member.UserID: "lead", w.Billing.UserID: "member", w.Owner.UserID: "lead"}
			if got := env.TeamMembers(t, w.Owner.Access, w.Org, team); !maps.Equal(got, want) {
				t.Errorf("team members = %v; want %v", got, want)
			}
			if got := env.Teams(t, w.Owner.Access, w.Org)[team]; got["member_count"] != float64(3) || got["my_role"] != "lead" {
				t.Errorf("owner's view of the team = %v; want member_count 3 (no duplicate row) and my_role lead", got)
			}
		})

		t.Run("remove", func(t *testing.T) {
			path := func(user string) string { return members + "/" + user }
			env.RunCases(t, []testenv.Case{
				{Name: "plain member removes another", Method: "DELETE", Path: path(w.Member.UserID), Token: w.Billing.Access, Want: 403},
				{Name: "stranger", Method: "DELETE", Path: path(w.Billing.UserID), Token: w.Stranger.Access, Want: 404},
				{Name: "plain member removes self", Method: "DELETE", Path: path(w.Billing.UserID), Token: w.Billing.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { testenv.WantMessage(t, r) }},
				{Name: "self, no longer on the team", Method: "DELETE", Path: path(w.Billing.UserID), Token: w.Billing.Access, Want: 404},
				{Name: "org member never on the team", Method: "DELETE", Path: path(w.Admin.UserID), Token: w.Owner.Access, Want: 404},
				{Name: "user who does not exist", Method: "DELETE", Path: path(uuid.NewString()), Token: w.Owner.Access, Want: 404},
				{Name: "lead removes another lead", Method: "DELETE", Path: path(w.Owner.UserID), Token: w.Member.Access, Want: 200},
				{Name: "admin not on the team removes the lead", Method: "DELETE", Path: path(w.Member.UserID), Token: w.Admin.Access, Want: 200},
				{Name: "no token", Method: "DELETE", Path: path(w.Member.UserID), Want: 401},
			})
			if got := env.TeamMembers(t, w.Owner.Access, w.Org, team); len(got) != 0 {
				t.Errorf("team members = %v; want none left", got)
			}
			if got := env.Teams(t, w.Owner.Access, w.Org)[team]["member_count"]; got != float64(0) {
				t.Errorf("member_count = %v; want 0", got)
			}
		})

		t.Run("self-removal needs no lead and no permission", func(t *testing.T) {
			env.Call(t, "POST", members, w.Owner.Access, map[string]string{"user_id": w.Billing.UserID, "role": "member"}).Want(t, 200)
			env.Call(t, "DELETE", members+"/"+w.Billing.UserID, w.Billing.Access, nil).Want(t, 200)
		})
	})
}

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
