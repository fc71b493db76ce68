package tasks_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// tasksWorld is a team org with a team whose lead is the owner, a member of
// the team, an org member outside it, and a stranger with a workspace of
// their own.
type tasksWorld struct {
	org, team             string
	owner, mate, outsider *testenv.Account
	stranger              *testenv.Account
	strangerTeam          string
}

func newTasksWorld(t *testing.T, env *testenv.Env) *tasksWorld {
	t.Helper()
	w := &tasksWorld{}
	w.owner, w.org = env.Team(t)
	w.team = env.CreateTeam(t, w.owner.Token, w.org, "Platform")
	w.mate = env.Join(t, w.owner, w.org, "member")
	env.Do(t, "POST", "/v1/orgs/"+w.org+"/teams/"+w.team+"/members", w.owner.Token, map[string]string{"user_id": w.mate.UserID, "role": "member"}).Want(t, 200)
	w.outsider = env.Join(t, w.owner, w.org, "admin")
	var sorg string
	w.stranger, sorg = env.Team(t)
	w.strangerTeam = env.CreateTeam(t, w.stranger.Token, sorg, "Theirs")
	return w
}

func tasksIssue(t *testing.T, env *testenv.Env, token string, body map[string]any) *testenv.Resp {
	t.Helper()
	return env.Do(t, "POST", "/tasks/v1/issues", token, body).Want(t, 200)
}

// tasksChild creates an issue in w's team as the team member, under parent
// when not empty, and returns its id.
func tasksChild(t *testing.T, env *testenv.Env, w *tasksWorld, title, parent string) string {
	t.Helper()
	body := map[string]any{"teamId": w.team, "title": title}
	if parent != "" {
		body["parentId"] = parent
	}
	return tasksIssue(t, env, w.mate.Token, body).Str("issue.id")
}

// TestTasksAccess checks the tool gate (401 with the resource metadata
// pointer, 403 naming a disabled tool) and that only the team's members
// reach its states and issues; everything else reads as 404.
func TestTasksAccess(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		r := env.Do(t, "GET", "/tasks/v1/issues", "", nil).Want(t, 401)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("WWW-Authenticate = %q; want the resource metadata pointer", r.Header.Get("WWW-Authenticate"))
		}
		env.Do(t, "GET", "/tasks/v1/issues", "svc_u_notatoken", nil).Want(t, 401)

		issue := tasksIssue(t, env, w.owner.Token, map[string]any{"teamId": w.team, "title": "First"}).Str("issue.id")
		states := "/tasks/v1/teams/" + w.team + "/states"
		env.RunCases(t, []testenv.Case{
			{Name: "lead reads states", Method: "GET", Path: states, Token: w.owner.Token, Want: 200},
			{Name: "team member reads states", Method: "GET", Path: states, Token: w.mate.Token, Want: 200},
			{Name: "org member outside the team", Method: "GET", Path: states, Token: w.outsider.Token, Want: 404},
			{Name: "stranger", Method: "GET", Path: states, Token: w.stranger.Token, Want: 404},
			{Name: "unknown team", Method: "GET", Path: "/tasks/v1/teams/" + uuid.NewString() + "/states", Token: w.owner.Token, Want: 404},
			{Name: "malformed team id", Method: "GET", Path: "/tasks/v1/teams/x/states", Token: w.owner.Token, Want: 404},
			{Name: "another workspace's team", Method: "GET", Path: "/tasks/v1/teams/" + w.strangerTeam + "/states", Token: w.owner.Token, Want: 404},
			{Name: "outsider reads issue", Method: "GET", Path: "/tasks/v1/issues/" + issue, Token: w.outsider.Token, Want: 404},
			{Name: "stranger reads issue", Method: "GET", Path: "/tasks/v1/issues/" + issue, Token: w.stranger.Token, Want: 404},
			{Name: "stranger patches issue", Method: "PATCH", Path: "/tasks/v1/issues/" + issue, Token: w.stranger.Token, Body: map[string]string{"title": "x"}, Want: 404},
			{Name: "stranger deletes issue", Method: "DELETE", Path: "/tasks/v1/issues/" + issue, Token: w.stranger.Token, Want: 404},
			{Name: "outsider creates in the team", Method: "POST", Path: "/tasks/v1/issues", Token: w.outsider.Token, Body: map[string]string{"teamId": w.team, "title": "x"}, Want: 404},
			{Name: "outsider lists the team", Method: "GET", Path: "/tasks/v1/issues?teamId=" + w.team, Token: w.outsider.Token, Want: 404},
			{Name: "unknown path", Method: "GET", Path: "/tasks/v1/nothing", Token: w.owner.Token, Want: 404},
		})
		if got := env.Do(t, "GET", "/tasks/v1/issues", w.outsider.Token, nil).Want(t, 200).Get("issues").([]any); len(got) != 0 {
			t.Errorf("outsider lists %d issues; want none (no team)", len(got))
		}

		env.SetTool(t, w.owner.Token, w.org, "tasks", false)
		off := env.Do(t, "POST", "/v1/auth/switch-org", w.owner.Token, map[string]string{"org_id": w.org}).Want(t, 200).Str("access_token")
		if r := env.Do(t, "GET", "/tasks/v1/issues", off, nil).Want(t, 403); !strings.Contains(r.Str("error"), "tasks") {
			t.Errorf("disabled tool error = %q; want it to name tasks", r.Str("error"))
		}
	})
}

// TestTasksStates checks the five workflow states a team gets on first use.
func TestTasksStates(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		r := env.Do(t, "GET", "/tasks/v1/teams/"+w.team+"/states", w.mate.Token, nil).Want(t, 200)
		states := r.Get("states").([]any)
		var names, types []string
		for _, s := range states {
			m := s.(map[string]any)
			testenv.CheckKeys(t, "state", m, "id", "teamId", "name", "type", "color", "position", "description", "canDelete")
			if m["teamId"] != w.team {
				t.Errorf("state teamId = %v; want %s", m["teamId"], w.team)
			}
			names, types = append(names, m["name"].(string)), append(types, m["type"].(string))
		}
		if !slices.Equal(names, []string{"Backlog", "Todo", "In Progress", "Done", "Canceled"}) ||
			!slices.Equal(types, []string{"backlog", "unstarted", "started", "completed", "canceled"}) {
			t.Errorf("states = %v %v; want the five defaults in order", names, types)
		}
		again := env.Do(t, "GET", "/tasks/v1/teams/"+w.team+"/states", w.owner.Token, nil).Want(t, 200)
		if fmt.Sprint(again.Get("states")) != fmt.Sprint(r.Get("states")) {
			t.Errorf("states changed on the second read")
		}
	})
}

// TestTasksIssues checks create, read, list and update: validation, the
// answer's shape, numbers per team, labels, states and completion.
func TestTasksIssues(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		states := map[string]string{}
		for _, s := range env.Do(t, "GET", "/tasks/v1/teams/"+w.team+"/states", w.owner.Token, nil).Want(t, 200).Get("states").([]any) {
			states[s.(map[string]any)["type"].(string)] = s.(map[string]any)["id"].(string)
		}
		env.RunCases(t, []testenv.Case{
			{Name: "no teamId", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"title": "x"}, Want: 400},
			{Name: "no title", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team}, Want: 400},
			{Name: "empty title", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "  "}, Want: 400},
			{Name: "title not a string", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": 5}, Want: 400},
			{Name: "priority 5", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "priority": 5}, Want: 400},
			{Name: "priority -1", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "priority": -1}, Want: 400},
			{Name: "bad dueDate", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "dueDate": "tomorrow"}, Want: 400},
			{Name: "unknown stateId", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "stateId": uuid.NewString()}, Want: 400},
			{Name: "assignee not in the org", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "assigneeId": w.stranger.UserID}, Want: 400},
			{Name: "unknown parent", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "parentId": uuid.NewString()}, Want: 400},
			{Name: "labels not an array", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: map[string]any{"teamId": w.team, "title": "x", "labels": "bug"}, Want: 400},
			{Name: "malformed JSON", Method: "POST", Path: "/tasks/v1/issues", Token: w.owner.Token, Body: `{"teamId":`, Want: 400},
		})

		r := tasksIssue(t, env, w.mate.Token, map[string]any{"teamId": w.team, "title": " Fix login ", "description": "It breaks.",
			"priority": 2, "estimate": 3, "dueDate": "2026-12-24", "assigneeId": w.outsider.UserID, "labels": []any{"bug", map[string]string{"name": "auth"}, "bug"}})
		i := r.Obj(t, "issue")
		testenv.CheckKeys(t, "issue", i, "id", "teamId", "projectId", "stateId", "creatorId", "assigneeId", "parentId", "cycleId", "number",
			"title", "description", "priority", "estimate", "childCount", "blockedByCount", "position", "dueDate", "created", "modified",
			"completedAt", "following", "state", "assignee", "labels", "mentions")
		if i["title"] != "Fix login" || i["teamId"] != w.team || i["creatorId"] != w.mate.UserID || i["number"] != float64(1) ||
			i["priority"] != float64(2) || i["estimate"] != float64(3) || i["dueDate"] != "2026-12-24" || i["stateId"] != states["backlog"] ||
			i["completedAt"] != nil || i["parentId"] != nil || i["childCount"] != float64(0) {
			t.Errorf("created issue = %s", r.Body)
		}
		if a := i["assignee"].(map[string]any); a["userId"] != w.outsider.UserID || a["email"] != w.outsider.Email {
			t.Errorf("assignee = %v; want %s", a, w.outsider.UserID)
		}
		var labels []string
		for _, l := range i["labels"].([]any) {
			labels = append(labels, l.(map[string]any)["name"].(string))
			if l.(map[string]any)["teamId"] != w.team || !testenv.IsUUID(l.(map[string]any)["id"].(string)) {
				t.Errorf("label = %v", l)
			}
		}
		if sort.Strings(labels); !slices.Equal(labels, []string{"auth", "bug"}) {
			t.Errorf("labels = %v; want auth, bug", labels)
		}
		id := r.Str("issue.id")
		if n := tasksIssue(t, env, w.owner.Token, map[string]any{"teamId": w.team, "title": "Second"}).Get("issue.number"); n != float64(2) {
			t.Errorf("second number = %v; want 2", n)
		}

		got := env.Do(t, "GET", "/tasks/v1/issues/"+id, w.owner.Token, nil).Want(t, 200)
		if got.Str("issue.id") != id || got.Str("issue.title") != "Fix login" {
			t.Errorf("GET issue = %s", got.Body)
		}
		list := env.Do(t, "GET", "/tasks/v1/issues?teamId="+w.team, w.mate.Token, nil).Want(t, 200).Get("issues").([]any)
		if len(list) != 2 || list[0].(map[string]any)["id"] != id {
			t.Errorf("list = %v; want the two issues, oldest first", list)
		}
		env.Do(t, "GET", "/tasks/v1/issues?deleted=maybe", w.mate.Token, nil).Want(t, 400)

		// Update: fields, completion, and what cannot change.
		done := env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"stateId": states["completed"], "title": "Fixed login",
			"assigneeId": nil, "labels": []string{"done"}, "estimate": nil}).Want(t, 200)
		if done.Str("issue.state.type") != "completed" || done.Get("issue.completedAt") == nil || done.Get("issue.assignee") != nil ||
			done.Get("issue.assigneeId") != nil || done.Get("issue.estimate") != nil || done.Str("issue.title") != "Fixed login" ||
			!strings.Contains(fmt.Sprint(done.Get("issue.labels")), "name:done") || len(done.Get("issue.labels").([]any)) != 1 {
			t.Errorf("patched issue = %s", done.Body)
		}
		reopened := env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"stateId": states["started"]}).Want(t, 200)
		if reopened.Get("issue.completedAt") != nil || reopened.Str("issue.title") != "Fixed login" {
			t.Errorf("reopened issue = %s; want completedAt cleared, the rest kept", reopened.Body)
		}
		env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"teamId": w.team}).Want(t, 400)
		env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"title": ""}).Want(t, 400)
		env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"parentId": id}).Want(t, 400)
		env.Do(t, "PATCH", "/tasks/v1/issues/"+uuid.NewString(), w.owner.Token, map[string]any{"title": "x"}).Want(t, 404)

		// Sub-issues: childCount, and no cycles.
		child := tasksIssue(t, env, w.owner.Token, map[string]any{"teamId": w.team, "title": "Child", "parentId": id}).Str("issue.id")
		if n := env.Do(t, "GET", "/tasks/v1/issues/"+id, w.owner.Token, nil).Want(t, 200).Get("issue.childCount"); n != float64(1) {
			t.Errorf("childCount = %v; want 1", n)
		}
		env.Do(t, "PATCH", "/tasks/v1/issues/"+id, w.owner.Token, map[string]any{"parentId": child}).Want(t, 400)

		// Audit entries under the tool's name.
		entries := env.Audit(t, w.owner.Token, w.org, "tool=tasks")
		actions := map[string]int{}
		for _, e := range entries {
			actions[e["action"].(string)]++
		}
		if actions["tasks.issue.created"] != 3 || actions["tasks.issue.updated"] != 2 {
			t.Errorf("tasks audit actions = %v; want 3 created, 2 updated", actions)
		}
	})
}

// TestTasksDeleteRestore checks that delete soft-deletes the whole subtree
// and restore brings it all back, sub-issues deleted earlier included
// (spec 3), and restore's 404s (spec 4.6).
func TestTasksDeleteRestore(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		mk := func(title, parent string) string { return tasksChild(t, env, w, title, parent) }
		root := mk("Root", "")
		a := mk("A", root)
		b := mk("B", root)
		a1 := mk("A1", a)
		other := mk("Other", "")

		env.Do(t, "POST", "/tasks/v1/issues/"+root+"/restore", w.mate.Token, nil).Want(t, 404) // not deleted
		env.Do(t, "DELETE", "/tasks/v1/issues/"+b, w.mate.Token, nil).Want(t, 200)
		if n := env.Do(t, "GET", "/tasks/v1/issues/"+root, w.mate.Token, nil).Want(t, 200).Get("issue.childCount"); n != float64(1) {
			t.Errorf("childCount after deleting B = %v; want 1 (live children only)", n)
		}
		env.Do(t, "DELETE", "/tasks/v1/issues/"+root, w.owner.Token, nil).Want(t, 200)
		for _, id := range []string{root, a, b, a1} {
			env.Do(t, "GET", "/tasks/v1/issues/"+id, w.mate.Token, nil).Want(t, 404)
		}
		env.Do(t, "DELETE", "/tasks/v1/issues/"+root, w.owner.Token, nil).Want(t, 404)
		env.Do(t, "PATCH", "/tasks/v1/issues/"+a, w.owner.Token, map[string]any{"title": "x"}).Want(t, 404)
		ids := func(deleted bool) []string {
			var out []string
			for _, i := range env.Do(t, "GET", fmt.Sprintf("/tasks/v1/issues?teamId=%s&deleted=%v", w.team, deleted), w.mate.Token, nil).Want(t, 200).Get("issues").([]any) {
				out = append(out, i.(map[string]any)["id"].(string))
			}
			sort.Strings(out)
			return out
		}
		want := []string{root, a, b, a1}
		sort.Strings(want)
		if got := ids(true); !slices.Equal(got, want) {
			t.Errorf("Recently Deleted = %v; want %v", got, want)
		}
		if got := ids(false); !slices.Equal(got, []string{other}) {
			t.Errorf("live issues = %v; want only %s", got, other)
		}

		env.Do(t, "POST", "/tasks/v1/issues/"+root+"/restore", w.outsider.Token, nil).Want(t, 404) // not in the team
		env.Do(t, "POST", "/tasks/v1/issues/"+root+"/restore", w.stranger.Token, nil).Want(t, 404)
		env.Do(t, "POST", "/tasks/v1/issues/"+uuid.NewString()+"/restore", w.mate.Token, nil).Want(t, 404)
		env.Do(t, "POST", "/tasks/v1/issues/not-a-uuid/restore", w.mate.Token, nil).Want(t, 404)
		r := env.Do(t, "POST", "/tasks/v1/issues/"+root+"/restore", w.mate.Token, nil).Want(t, 200)
		if r.Str("issue.id") != root || r.Get("issue.childCount") != float64(2) {
			t.Errorf("restore = %s; want the root back with both children", r.Body)
		}
		for _, id := range []string{root, a, b, a1} {
			env.Do(t, "GET", "/tasks/v1/issues/"+id, w.mate.Token, nil).Want(t, 200)
		}
		if got := ids(true); len(got) != 0 {
			t.Errorf("Recently Deleted after restore = %v; want empty", got)
		}
		entries := env.Audit(t, w.owner.Token, w.org, "action=tasks.issue.restored")
		if len(entries) != 1 || entries[0]["target_id"] != root {
			t.Errorf("restore audit = %+v; want one entry for the root", entries)
		}
	})
}

// TestTasksNumbersRace checks that concurrent creates in one team get
// distinct consecutive numbers.
func TestTasksNumbersRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		rs := testenv.AtOnceAnswers(20, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/tasks/v1/issues", w.mate.Token, map[string]any{"teamId": w.team, "title": fmt.Sprintf("Issue %d", i)})
		})
		var nums []int
		for _, r := range rs {
			if r.Status != http.StatusOK {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			nums = append(nums, int(r.Get("issue.number").(float64)))
		}
		sort.Ints(nums)
		for k, n := range nums {
			if n != k+1 {
				t.Fatalf("numbers = %v; want 1 to 20, each once", nums)
			}
		}
	})
}

// TestTasksTreeRaces checks that concurrent tree changes stay consistent
// on both databases: two issues made each other's parent at once (one
// wins, no cycle), and a child attached while its parent is deleted (the
// child never outlives its parent live).
func TestTasksTreeRaces(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		mk := func(title, parent string) string { return tasksChild(t, env, w, title, parent) }
		for round := range 5 {
			a, b := mk("A", ""), mk("B", "")
			rs := testenv.AtOnceAnswers(2, func(i int) *testenv.Resp {
				from, to := a, b
				if i == 1 {
					from, to = b, a
				}
				return env.Do(t, "PATCH", "/tasks/v1/issues/"+from, w.mate.Token, map[string]any{"parentId": to})
			})
			ok := 0
			for _, r := range rs {
				switch r.Status {
				case 200:
					ok++
				case 400:
				default:
					t.Fatalf("round %d: PATCH parentId: %d %s", round, r.Status, r.Body)
				}
			}
			if ok != 1 {
				t.Errorf("round %d: %d of two crossing parent changes succeeded; want exactly 1", round, ok)
			}

			p := mk("P", "")
			rs = testenv.AtOnceAnswers(2, func(i int) *testenv.Resp {
				if i == 0 {
					return env.Do(t, "DELETE", "/tasks/v1/issues/"+p, w.mate.Token, nil)
				}
				return env.Do(t, "POST", "/tasks/v1/issues", w.mate.Token, map[string]any{"teamId": w.team, "title": "C", "parentId": p})
			})
			if rs[0].Status != 200 {
				t.Fatalf("round %d: delete: %d %s", round, rs[0].Status, rs[0].Body)
			}
			if rs[1].Status == 200 {
				env.Do(t, "GET", "/tasks/v1/issues/"+rs[1].Str("issue.id"), w.mate.Token, nil).Want(t, 404)
			} else if rs[1].Status != 400 {
				t.Fatalf("round %d: create child: %d %s", round, rs[1].Status, rs[1].Body)
			}
		}
	})
}

// TestTasksInputBounds checks inputs PostgreSQL could not store and label
// names matched without regard to case.
func TestTasksInputBounds(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newTasksWorld(t, env)
		env.Do(t, "POST", "/tasks/v1/issues", w.mate.Token, map[string]any{"teamId": w.team, "title": "x", "estimate": 2147483648}).Want(t, 400)
		env.Do(t, "POST", "/tasks/v1/issues", w.mate.Token, `{"teamId":"`+w.team+`","title":"a\u0000b"}`).Want(t, 400)
		env.Do(t, "POST", "/tasks/v1/issues", w.mate.Token, map[string]any{"teamId": w.team, "title": `a\u0000b`}).Want(t, 200) // a literal backslash-u is fine
		first := tasksIssue(t, env, w.mate.Token, map[string]any{"teamId": w.team, "title": "x", "labels": []string{"Bug"}})
		second := tasksIssue(t, env, w.mate.Token, map[string]any{"teamId": w.team, "title": "y", "labels": []string{"BUG"}})
		if fmt.Sprint(first.Get("issue.labels")) != fmt.Sprint(second.Get("issue.labels")) {
			t.Errorf("labels %v and %v; want the one team label Bug for both", first.Get("issue.labels"), second.Get("issue.labels"))
		}
	})
}
