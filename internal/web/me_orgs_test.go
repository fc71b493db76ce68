package web_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// checkMyOrgs checks the shape of every row of a GET /v1/me/orgs answer
// (spec 2: Org + member_count + is_default, no tools) and that exactly one
// row is the default; it returns the rows by id.
func checkMyOrgs(t *testing.T, r *testenv.Resp) map[string]map[string]any {
	t.Helper()
	rows := r.List(t, "orgs")
	byID := map[string]map[string]any{}
	defaults := 0
	for _, o := range rows {
		for _, f := range []string{"id", "name", "slug", "avatar_url", "kind", "created_at"} {
			if _, ok := o[f].(string); !ok {
				t.Errorf("org %v: %s = %#v; want a string", o["id"], f, o[f])
			}
		}
		testenv.Time(t, "created_at", o["created_at"])
		if k := o["kind"]; k != "personal" && k != "team" {
			t.Errorf("org %v: kind = %#v; want personal or team", o["id"], k)
		}
		n, ok := o["member_count"].(float64)
		if !ok || n != float64(int(n)) || n < 1 {
			t.Errorf("org %v: member_count = %#v; want a positive integer", o["id"], o["member_count"])
		}
		d, ok := o["is_default"].(bool)
		if !ok {
			t.Errorf("org %v: is_default = %#v; want a boolean", o["id"], o["is_default"])
		}
		if d {
			defaults++
		}
		if _, ok := o["tools"]; ok {
			t.Errorf("org %v has a tools field; the workspace list carries none", o["id"])
		}
		byID[o["id"].(string)] = o
	}
	if defaults != 1 {
		t.Errorf("orgs with is_default true = %d in %s; want exactly 1", defaults, r.Body)
	}
	return byID
}

// TestMyOrgs covers "GET /v1/me/orgs" (spec 4.2 rule 3).
func TestMyOrgs(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("personal org only", func(t *testing.T) {
			a := env.Register(t)
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			p, ok := orgs[a.OrgID]
			if len(orgs) != 1 || !ok {
				t.Fatalf("orgs = %v; want only the personal org %s", orgs, a.OrgID)
			}
			if p["kind"] != "personal" || p["is_default"] != true || p["member_count"] != float64(1) {
				t.Errorf("personal org = %v; want kind personal, is_default true, member_count 1", p)
			}
		})

		t.Run("team orgs and the default", func(t *testing.T) {
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			team := env.TeamOrg(t, "Team Three", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"}, [2]string{c.UserID, "member"})
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 2 {
				t.Fatalf("orgs = %d; want 2 (personal and team)", len(orgs))
			}
			if o := orgs[team]; o == nil || o["kind"] != "team" || o["name"] != "Team Three" || o["member_count"] != float64(3) || o["is_default"] != false {
				t.Errorf("team org = %v; want kind team, name Team Three, member_count 3, is_default false", o)
			}
			if o := orgs[a.OrgID]; o == nil || o["kind"] != "personal" || o["is_default"] != true {
				t.Errorf("personal org = %v; want kind personal, is_default true", o)
			}

			env.Do(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
			orgs = checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if orgs[team]["is_default"] != true || orgs[a.OrgID]["is_default"] != false {
				t.Errorf("after switch-org: team is_default %v, personal is_default %v; want true, false",
					orgs[team]["is_default"], orgs[a.OrgID]["is_default"])
			}
		})

		t.Run("api-key token", func(t *testing.T) {
			a := env.Register(t)
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", env.KeyToken(t, a), nil).Want(t, 200))
			if _, ok := orgs[a.OrgID]; !ok {
				t.Errorf("orgs = %v; want the personal org %s", orgs, a.OrgID)
			}
		})

		t.Run("no token", func(t *testing.T) {
			env.Call(t, "GET", "/v1/me/orgs", "", nil).Want(t, 401)
		})

		// The default org (the last switch-org) is deleted: the list still
		// marks exactly one default, the org a new sign-in lands in.
		t.Run("default org deleted", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			team := env.TeamOrg(t, "Doomed Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
			env.Do(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, team, env.Clock.Now().UnixMicro())
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 1 || orgs[a.OrgID]["is_default"] != true {
				t.Errorf("orgs = %v; want only the personal org %s, marked default", orgs, a.OrgID)
			}
			login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			if got := login.Str("org.id"); got != a.OrgID {
				t.Errorf("login lands in org %s; want the personal org %s", got, a.OrgID)
			}
		})

		// Spec 4.2 rule 3: the personal org is created first if missing.
		t.Run("personal org missing", func(t *testing.T) {
			a := env.Register(t)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, a.OrgID, env.Clock.Now().UnixMicro())
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 1 {
				t.Fatalf("orgs = %v; want one new personal org", orgs)
			}
			for id, o := range orgs {
				if id == a.OrgID || o["kind"] != "personal" || o["is_default"] != true {
					t.Errorf("org %s = %v; want a new personal org marked default", id, o)
				}
			}
		})
	})
}
