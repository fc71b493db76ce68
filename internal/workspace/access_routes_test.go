package workspace_test

import (
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestWsOutsiders checks every route of spec 4.4 against callers outside the
// workspace (spec 4 and 7.2: a resource outside the caller's workspace reads
// as 404, never 403; 401 without credentials; CONTRACT §4: an API-key token
// is bound to its workspace, and is refused where a full session is needed).
func TestWsOutsiders(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		team := env.CreateTeam(t, w.Owner.Access, w.Org, "Platform")
		key := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Robot", "role": "member"}).Str("api_key.id")
		claim := env.ClaimDomain(t, w.Owner.Access, w.Org, testenv.Domain(), "")["id"].(string)
		// The member's key is bound to their personal org.
		memberKeyToken := env.KeyToken(t, w.Member)
		deleted := env.TeamOrg(t, "Deleted org", [2]string{w.Owner.UserID, "owner"})
		env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, deleted, env.Clock.Now().UnixMicro())

		routes := []struct {
			method, path string
			body         any
		}{
			{"GET", "/teams", nil},
			{"POST", "/teams", map[string]string{"name": "Outsiders"}},
			{"PATCH", "/teams/" + team, map[string]string{"name": "Outsiders"}},
			{"DELETE", "/teams/" + team, nil},
			{"GET", "/teams/" + team + "/members", nil},
			{"POST", "/teams/" + team + "/members", map[string]string{"user_id": w.Stranger.UserID, "role": "lead"}},
			{"DELETE", "/teams/" + team + "/members/" + w.Owner.UserID, nil},
			{"GET", "/tools", nil},
			{"PUT", "/tools", map[string]any{"tool": "tasks", "enabled": false}},
			{"GET", "/api-keys", nil},
			{"POST", "/api-keys", map[string]any{"name": "Outsider", "role": "admin"}},
			{"DELETE", "/api-keys/" + key, nil},
			{"GET", "/audit", nil},
			{"GET", "/domains", nil},
			{"POST", "/domains", map[string]string{"domain": testenv.Domain()}},
			{"PATCH", "/domains/" + claim, map[string]string{"mode": "auto_join"}},
			{"DELETE", "/domains/" + claim, nil},
			{"POST", "/domains/" + claim + "/verify", nil},
		}
		for _, rt := range routes {
			t.Run(rt.method+" "+rt.path, func(t *testing.T) {
				// Outside the key's workspace: 404, full-session route or not.
				keyStatus := 404
				env.RunCases(t, []testenv.Case{
					{Name: "no token", Method: rt.method, Path: "/v1/orgs/" + w.Org + rt.path, Body: rt.body, Want: 401},
					{Name: "garbage token", Method: rt.method, Path: "/v1/orgs/" + w.Org + rt.path, Token: "not-a-jwt", Body: rt.body, Want: 401},
					{Name: "stranger", Method: rt.method, Path: "/v1/orgs/" + w.Org + rt.path, Token: w.Stranger.Access, Body: rt.body, Want: 404},
					{Name: "member's key bound to another workspace", Method: rt.method, Path: "/v1/orgs/" + w.Org + rt.path, Token: memberKeyToken, Body: rt.body, Want: keyStatus},
					{Name: "unknown org", Method: rt.method, Path: "/v1/orgs/" + uuid.NewString() + rt.path, Token: w.Owner.Access, Body: rt.body, Want: 404},
					{Name: "malformed org id", Method: rt.method, Path: "/v1/orgs/acme" + rt.path, Token: w.Owner.Access, Body: rt.body, Want: 404},
					{Name: "soft-deleted org of the caller", Method: rt.method, Path: "/v1/orgs/" + deleted + rt.path, Token: w.Owner.Access, Body: rt.body, Want: 404},
					{Name: "another user's personal org", Method: rt.method, Path: "/v1/orgs/" + w.Owner.OrgID + rt.path, Token: w.Stranger.Access, Body: rt.body, Want: 404},
				})
			})
		}

		t.Run("nothing changed", func(t *testing.T) {
			if got := env.Teams(t, w.Owner.Access, w.Org); len(got) != 1 || got[team]["name"] != "Platform" {
				t.Errorf("teams = %v; want Platform only, unchanged", got)
			}
			if got := env.TeamMembers(t, w.Owner.Access, w.Org, team); len(got) != 1 || got[w.Owner.UserID] != "lead" {
				t.Errorf("team members = %v; want the owner as lead only", got)
			}
			if got := toolMatrix(t, env.Call(t, "GET", "/v1/orgs/"+w.Org+"/tools", w.Owner.Access, nil).Want(t, 200)); len(got) != 7 || got[0] != "tasks=true" {
				t.Errorf("tools = %v; want all enabled", got)
			}
			if got := env.Call(t, "GET", "/v1/orgs/"+w.Org+"/api-keys", w.Owner.Access, nil).Want(t, 200).List(t, "api_keys"); len(got) != 1 {
				t.Errorf("api_keys = %v; want the one robot", got)
			}
			ds := env.Call(t, "GET", "/v1/orgs/"+w.Org+"/domains", w.Owner.Access, nil).Want(t, 200).List(t, "domains")
			if len(ds) != 1 || ds[0]["mode"] != "suggest" {
				t.Errorf("domains = %v; want the one suggest claim", ds)
			}
		})
	})
}

// TestWsRaces runs the operations whose outcome the database decides
// concurrently: two orgs verifying one domain (spec 3: the first wins, the
// other gets 409) and one user joining by domain twice at once (idempotent).
func TestWsRaces(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("two orgs verify one domain", func(t *testing.T) {
			const n = 4
			domain := testenv.Domain()
			owners := make([]*testenv.Account, n)
			orgs := make([]string, n)
			claims := make([]string, n)
			var values []string
			for i := range n {
				owners[i] = env.Register(t)
				orgs[i] = env.TeamOrg(t, "Racer", [2]string{owners[i].UserID, "owner"})
				c := env.ClaimDomain(t, owners[i].Access, orgs[i], domain, "")
				claims[i] = c["id"].(string)
				values = append(values, c["dns_record"].(map[string]any)["value"].(string))
			}
			env.DNS.SetTXT("_service."+domain, values...)
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					statuses[i] = tryStatus(env, "POST", "/v1/orgs/"+orgs[i]+"/domains/"+claims[i]+"/verify", owners[i].Access)
				})
			}
			wg.Wait()
			ok := 0
			for i, s := range statuses {
				switch s {
				case 200:
					ok++
				case 409:
				default:
					t.Errorf("org %d: verify status = %d; want 200 or 409", i, s)
				}
			}
			if ok != 1 {
				t.Errorf("statuses = %v; want exactly one 200 and the rest 409", statuses)
			}
			var verified int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM domains WHERE domain = $1 AND verified_at IS NOT NULL`, domain).Scan(&verified); err != nil {
				t.Fatal(err)
			}
			if verified != 1 {
				t.Errorf("verified claims of %s = %d; want 1", domain, verified)
			}
		})

		t.Run("one user joins twice at once", func(t *testing.T) {
			w := env.NewWorld(t)
			domain := testenv.Domain()
			env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
			u := env.VerifiedAt(t, domain)
			seen := env.AuditIDs(t, w.Owner.Access, w.Org)
			const n = 4
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					statuses[i] = tryStatus(env, "POST", "/v1/me/discoverable/join", u.Access)
				})
			}
			wg.Wait()
			for i, s := range statuses {
				if s != 200 {
					t.Errorf("join %d: status = %d; want 200", i, s)
				}
			}
			if got := env.Role(t, w.Org, u.UserID); got != "member" {
				t.Errorf("role = %q; want member", got)
			}
			if got := env.NewEntries(t, w.Owner.Access, w.Org, seen); len(got) != 1 {
				t.Errorf("audit entries of the joins = %v; want exactly one member.joined", got)
			}
		})
	})
}

// tryStatus sends method path with bearer and no body from any goroutine:
// it returns the status, or -1 when the request failed, instead of failing
// the test.
func tryStatus(env *testenv.Env, method, path, bearer string) int {
	r, err := env.Try(method, path, bearer, nil)
	if err != nil {
		return -1
	}
	return r.Status
}
