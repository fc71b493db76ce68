package web_test

import (
	"maps"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wsCheckTeam checks a Team record (CONTRACT §3).
func wsCheckTeam(t *testing.T, tm map[string]any, name string, count int, myRole any) {
	t.Helper()
	wsCheckKeys(t, "team", tm, "id", "name", "description", "member_count", "my_role", "created_at")
	if id, _ := tm["id"].(string); !signinUUID.MatchString(id) {
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
	meTime(t, "team.created_at", tm["created_at"])
}

// TestWsTeams covers list, create, rename and delete of teams (spec 4.4,
// section 3 Team row, section 8 name length; CONTRACT §3 Team, §4 team orgs
// only).
func TestWsTeams(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		other := meTeamOrg(t, env, "Other org", [2]string{w.owner.UserID, "owner"})
		otherTeam := wsCreateTeam(t, env, w.owner.Access, other, "Elsewhere")
		teams := "/v1/orgs/" + w.org + "/teams"
		var team string // created by the plain member, who leads it

		t.Run("list", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				{name: "personal org has none", method: "GET", path: "/v1/orgs/" + w.owner.OrgID + "/teams", token: w.owner.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						if got := meList(t, r, "teams"); len(got) != 0 {
							t.Errorf("teams = %v; want []", got)
						}
					}},
				{name: "new team org has none", method: "GET", path: teams, token: w.member.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						if got := meList(t, r, "teams"); len(got) != 0 {
							t.Errorf("teams = %v; want []", got)
						}
					}},
				{name: "stranger", method: "GET", path: teams, token: w.stranger.Access, wantStatus: 404},
				{name: "unknown org", method: "GET", path: "/v1/orgs/" + uuid.NewString() + "/teams", token: w.owner.Access, wantStatus: 404},
				{name: "no token", method: "GET", path: teams, wantStatus: 401},
			})
		})

		t.Run("create", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				{name: "plain member", method: "POST", path: teams, token: w.member.Access, body: map[string]string{"name": "Platform", "description": "Keeps the lights on"}, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						tm := wsObj(t, r, "team")
						wsCheckTeam(t, tm, "Platform", 1, "lead")
						if tm["description"] != "Keeps the lights on" {
							t.Errorf("team.description = %#v; want %q", tm["description"], "Keeps the lights on")
						}
						team, _ = tm["id"].(string)
					}},
				{name: "billing member", method: "POST", path: teams, token: w.billing.Access, body: map[string]string{"name": "Money"}, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { wsCheckTeam(t, wsObj(t, r, "team"), "Money", 1, "lead") }},
				{name: "name of two characters", method: "POST", path: teams, token: w.admin.Access, body: map[string]string{"name": "QA"}, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { wsCheckTeam(t, wsObj(t, r, "team"), "QA", 1, "lead") }},
				{name: "name of one character", method: "POST", path: teams, token: w.owner.Access, body: map[string]string{"name": "x"}, wantStatus: 400},
				{name: "name of one character after trimming", method: "POST", path: teams, token: w.owner.Access, body: map[string]string{"name": "  x  "}, wantStatus: 400},
				{name: "name missing", method: "POST", path: teams, token: w.owner.Access, body: map[string]string{"description": "no name"}, wantStatus: 400},
				{name: "empty body", method: "POST", path: teams, token: w.owner.Access, wantStatus: 400},
				{name: "malformed JSON", method: "POST", path: teams, token: w.owner.Access, body: `{"name": "Broken"`, wantStatus: 400},
				{name: "name not a string", method: "POST", path: teams, token: w.owner.Access, body: map[string]any{"name": 42}, wantStatus: 400},
				{name: "personal org", method: "POST", path: "/v1/orgs/" + w.owner.OrgID + "/teams", token: w.owner.Access, body: map[string]string{"name": "Solo"}, wantStatus: 403},
				{name: "stranger", method: "POST", path: teams, token: w.stranger.Access, body: map[string]string{"name": "Intruders"}, wantStatus: 404},
				{name: "no token", method: "POST", path: teams, body: map[string]string{"name": "Anon"}, wantStatus: 401},
			})
			if team == "" {
				t.Fatal("the member's team was not created")
			}
		})

		t.Run("list shows my_role and member_count", func(t *testing.T) {
			got := wsTeams(t, env, w.owner.Access, w.org)
			if len(got) != 3 {
				t.Fatalf("owner sees %d teams %v; want 3", len(got), got)
			}
			wsCheckTeam(t, got[team], "Platform", 1, nil)
			wsCheckTeam(t, wsTeams(t, env, w.member.Access, w.org)[team], "Platform", 1, "lead")
			wsDo(t, env, "POST", teams+"/"+team+"/members", w.member.Access, map[string]string{"user_id": w.admin.UserID, "role": "member"}).Want(t, 200)
			wsCheckTeam(t, wsTeams(t, env, w.admin.Access, w.org)[team], "Platform", 2, "member")
			wsCheckTeam(t, wsTeams(t, env, w.billing.Access, w.org)[team], "Platform", 2, nil)
		})

		t.Run("patch", func(t *testing.T) {
			path := teams + "/" + team
			renamed := func(name string) func(t *testing.T, r *testenv.Resp) {
				return func(t *testing.T, r *testenv.Resp) {
					t.Helper()
					signinWantMessage(t, r)
					if _, ok := r.JSON()["team"]; ok {
						t.Errorf("PATCH answered %s; want a Message, not the team", r.Body)
					}
					if got := wsTeams(t, env, w.owner.Access, w.org)[team]["name"]; got != name {
						t.Errorf("team name after PATCH = %#v; want %q", got, name)
					}
				}
			}
			wsRun(t, env, []wsCase{
				{name: "team lead", method: "PATCH", path: path, token: w.member.Access, body: map[string]string{"name": "Platform Ops"}, wantStatus: 200, wantBody: renamed("Platform Ops")},
				{name: "admin not on the team", method: "PATCH", path: path, token: w.admin.Access, body: map[string]string{"name": "Platform Admin"}, wantStatus: 200, wantBody: renamed("Platform Admin")},
				{name: "owner not on the team", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"name": "Platform"}, wantStatus: 200, wantBody: renamed("Platform")},
				{name: "description only", method: "PATCH", path: path, token: w.member.Access, body: map[string]string{"description": "New words"}, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						if got := wsTeams(t, env, w.owner.Access, w.org)[team]; got["description"] != "New words" || got["name"] != "Platform" {
							t.Errorf("team after PATCH = %v; want name Platform, description %q", got, "New words")
						}
					}},
				{name: "billing, not on the team", method: "PATCH", path: path, token: w.billing.Access, body: map[string]string{"name": "Hijacked"}, wantStatus: 403},
				{name: "name of two characters", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"name": "PL"}, wantStatus: 200, wantBody: renamed("PL")},
				{name: "name back", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"name": "Platform"}, wantStatus: 200, wantBody: renamed("Platform")},
				{name: "empty patch", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{}, wantStatus: 400},
				{name: "no body", method: "PATCH", path: path, token: w.owner.Access, wantStatus: 400},
				{name: "name of one character", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"name": "x"}, wantStatus: 400},
				{name: "unknown team", method: "PATCH", path: teams + "/" + uuid.NewString(), token: w.owner.Access, body: map[string]string{"name": "Ghost"}, wantStatus: 404},
				{name: "malformed team id", method: "PATCH", path: teams + "/not-a-team", token: w.owner.Access, body: map[string]string{"name": "Ghost"}, wantStatus: 404},
				{name: "team of another org under this org", method: "PATCH", path: teams + "/" + otherTeam, token: w.owner.Access, body: map[string]string{"name": "Moved"}, wantStatus: 404},
				{name: "stranger", method: "PATCH", path: path, token: w.stranger.Access, body: map[string]string{"name": "Intruders"}, wantStatus: 404},
				{name: "no token", method: "PATCH", path: path, body: map[string]string{"name": "Anon"}, wantStatus: 401},
			})
		})

		t.Run("plain team member is refused", func(t *testing.T) {
			// The admin is a plain member of the team but holds
			// org.teams.manage; the billing member gets a plain team seat
			// and no permission.
			wsDo(t, env, "POST", teams+"/"+team+"/members", w.member.Access, map[string]string{"user_id": w.billing.UserID, "role": "member"}).Want(t, 200)
			wsRun(t, env, []wsCase{
				{name: "rename", method: "PATCH", path: teams + "/" + team, token: w.billing.Access, body: map[string]string{"name": "Hijacked"}, wantStatus: 403},
				{name: "delete", method: "DELETE", path: teams + "/" + team, token: w.billing.Access, wantStatus: 403},
			})
		})

		t.Run("delete", func(t *testing.T) {
			doomed := wsCreateTeam(t, env, w.owner.Access, w.org, "Doomed")
			wsRun(t, env, []wsCase{
				{name: "member not on the team", method: "DELETE", path: teams + "/" + doomed, token: w.member.Access, wantStatus: 403},
				{name: "personal org", method: "DELETE", path: "/v1/orgs/" + w.owner.OrgID + "/teams/" + doomed, token: w.owner.Access, wantStatus: 403},
				{name: "team of another org under this org", method: "DELETE", path: teams + "/" + otherTeam, token: w.owner.Access, wantStatus: 404},
				{name: "stranger", method: "DELETE", path: teams + "/" + doomed, token: w.stranger.Access, wantStatus: 404},
				{name: "admin", method: "DELETE", path: teams + "/" + doomed, token: w.admin.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { signinWantMessage(t, r) }},
				{name: "team lead", method: "DELETE", path: teams + "/" + team, token: w.member.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { signinWantMessage(t, r) }},
				{name: "deleted team: again", method: "DELETE", path: teams + "/" + team, token: w.owner.Access, wantStatus: 404},
				{name: "deleted team: patch", method: "PATCH", path: teams + "/" + team, token: w.owner.Access, body: map[string]string{"name": "Revived"}, wantStatus: 404},
				{name: "deleted team: members", method: "GET", path: teams + "/" + team + "/members", token: w.owner.Access, wantStatus: 404},
				{name: "deleted team: add member", method: "POST", path: teams + "/" + team + "/members", token: w.owner.Access, body: map[string]string{"user_id": w.owner.UserID, "role": "lead"}, wantStatus: 404},
			})
			got := wsTeams(t, env, w.owner.Access, w.org)
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
		w := wsNewWorld(t, env)
		team := wsCreateTeam(t, env, w.member.Access, w.org, "Platform") // the member leads it
		other := meTeamOrg(t, env, "Other org", [2]string{w.owner.UserID, "owner"})
		otherTeam := wsCreateTeam(t, env, w.owner.Access, other, "Elsewhere")
		members := "/v1/orgs/" + w.org + "/teams/" + team + "/members"
		set := func(token, user, role string, want int) wsCase {
			return wsCase{method: "POST", path: members, token: token, body: map[string]string{"user_id": user, "role": role}, wantStatus: want}
		}
		named := func(name string, c wsCase) wsCase { c.name = name; return c }

		t.Run("list", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				{name: "any org member", method: "GET", path: members, token: w.billing.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						rows := meList(t, r, "members")
						if len(rows) != 1 {
							t.Fatalf("members = %v; want the lead only", rows)
						}
						m := rows[0]
						wsCheckKeys(t, "member row", m, "user_id", "name", "email", "avatar_url", "role", "joined_at")
						if m["user_id"] != w.member.UserID || m["role"] != "lead" || m["email"] != w.member.Email || m["name"] != w.member.Name {
							t.Errorf("member row = %v; want user %s (%s, %s) as lead", m, w.member.UserID, w.member.Email, w.member.Name)
						}
						if _, ok := m["avatar_url"].(string); !ok {
							t.Errorf("avatar_url = %#v; want a string", m["avatar_url"])
						}
						meTime(t, "joined_at", m["joined_at"])
					}},
				{name: "stranger", method: "GET", path: members, token: w.stranger.Access, wantStatus: 404},
				{name: "unknown team", method: "GET", path: "/v1/orgs/" + w.org + "/teams/" + uuid.NewString() + "/members", token: w.owner.Access, wantStatus: 404},
				{name: "team of another org under this org", method: "GET", path: "/v1/orgs/" + w.org + "/teams/" + otherTeam + "/members", token: w.owner.Access, wantStatus: 404},
				{name: "no token", method: "GET", path: members, wantStatus: 401},
			})
		})

		t.Run("add", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				named("lead adds an org member", set(w.member.Access, w.billing.UserID, "member", 200)),
				named("target not an org member", set(w.member.Access, w.stranger.UserID, "member", 400)),
				named("target does not exist", set(w.member.Access, uuid.NewString(), "member", 400)),
				named("target id malformed", set(w.member.Access, "someone", "member", 400)),
				named("role owner", set(w.member.Access, w.admin.UserID, "owner", 400)),
				named("role unknown", set(w.member.Access, w.admin.UserID, "boss", 400)),
				{name: "user_id missing", method: "POST", path: members, token: w.member.Access, body: map[string]string{"role": "member"}, wantStatus: 400},
				named("plain team member", set(w.billing.Access, w.admin.UserID, "member", 403)),
				named("org member not on the team", set(w.admin.Access, w.owner.UserID, "member", 200)), // admin holds org.teams.manage
				named("stranger", set(w.stranger.Access, w.stranger.UserID, "member", 404)),
				{name: "unknown team", method: "POST", path: "/v1/orgs/" + w.org + "/teams/" + uuid.NewString() + "/members", token: w.owner.Access, body: map[string]string{"user_id": w.owner.UserID, "role": "member"}, wantStatus: 404},
				{name: "no token", method: "POST", path: members, body: map[string]string{"user_id": w.owner.UserID, "role": "member"}, wantStatus: 401},
			})
			want := map[string]string{w.member.UserID: "lead", w.billing.UserID: "member", w.owner.UserID: "member"}
			if got := wsTeamMembers(t, env, w.owner.Access, w.org, team); !maps.Equal(got, want) {
				t.Errorf("team members = %v; want %v", got, want)
			}
			if got := wsTeams(t, env, w.owner.Access, w.org)[team]["member_count"]; got != float64(3) {
				t.Errorf("member_count = %v; want 3", got)
			}
		})

		t.Run("upsert changes the role", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				named("member to lead", set(w.member.Access, w.owner.UserID, "lead", 200)),
				named("same role again", set(w.member.Access, w.owner.UserID, "lead", 200)),
			})
			want := map[string]string{w.member.UserID: "lead", w.billing.UserID: "member", w.owner.UserID: "lead"}
			if got := wsTeamMembers(t, env, w.owner.Access, w.org, team); !maps.Equal(got, want) {
				t.Errorf("team members = %v; want %v", got, want)
			}
			if got := wsTeams(t, env, w.owner.Access, w.org)[team]; got["member_count"] != float64(3) || got["my_role"] != "lead" {
				t.Errorf("owner's view of the team = %v; want member_count 3 (no duplicate row) and my_role lead", got)
			}
		})

		t.Run("remove", func(t *testing.T) {
			path := func(user string) string { return members + "/" + user }
			wsRun(t, env, []wsCase{
				{name: "plain member removes another", method: "DELETE", path: path(w.member.UserID), token: w.billing.Access, wantStatus: 403},
				{name: "stranger", method: "DELETE", path: path(w.billing.UserID), token: w.stranger.Access, wantStatus: 404},
				{name: "plain member removes self", method: "DELETE", path: path(w.billing.UserID), token: w.billing.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { signinWantMessage(t, r) }},
				{name: "self, no longer on the team", method: "DELETE", path: path(w.billing.UserID), token: w.billing.Access, wantStatus: 404},
				{name: "org member never on the team", method: "DELETE", path: path(w.admin.UserID), token: w.owner.Access, wantStatus: 404},
				{name: "user who does not exist", method: "DELETE", path: path(uuid.NewString()), token: w.owner.Access, wantStatus: 404},
				{name: "lead removes another lead", method: "DELETE", path: path(w.owner.UserID), token: w.member.Access, wantStatus: 200},
				{name: "admin not on the team removes the lead", method: "DELETE", path: path(w.member.UserID), token: w.admin.Access, wantStatus: 200},
				{name: "no token", method: "DELETE", path: path(w.member.UserID), wantStatus: 401},
			})
			if got := wsTeamMembers(t, env, w.owner.Access, w.org, team); len(got) != 0 {
				t.Errorf("team members = %v; want none left", got)
			}
			if got := wsTeams(t, env, w.owner.Access, w.org)[team]["member_count"]; got != float64(0) {
				t.Errorf("member_count = %v; want 0", got)
			}
		})

		t.Run("self-removal needs no lead and no permission", func(t *testing.T) {
			wsDo(t, env, "POST", members, w.owner.Access, map[string]string{"user_id": w.billing.UserID, "role": "member"}).Want(t, 200)
			wsDo(t, env, "DELETE", members+"/"+w.billing.UserID, w.billing.Access, nil).Want(t, 200)
		})
	})
}
