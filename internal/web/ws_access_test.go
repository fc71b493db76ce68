package web_test

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
		w := wsNewWorld(t, env)
		team := wsCreateTeam(t, env, w.owner.Access, w.org, "Platform")
		key := wsCreateOrgKey(t, env, w.owner.Access, w.org, map[string]any{"name": "Robot", "role": "member"}).Str("api_key.id")
		claim := wsClaim(t, env, w.owner.Access, w.org, wsDomain(), "")["id"].(string)
		// The member's key is bound to their personal org.
		memberKeyToken := meKeyToken(t, env, w.member)
		deleted := meTeamOrg(t, env, "Deleted org", [2]string{w.owner.UserID, "owner"})
		meExec(t, env, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, deleted, env.Clock.Now().UnixMicro())

		routes := []struct {
			method, path string
			body         any
		}{
			{"GET", "/teams", nil},
			{"POST", "/teams", map[string]string{"name": "Outsiders"}},
			{"PATCH", "/teams/" + team, map[string]string{"name": "Outsiders"}},
			{"DELETE", "/teams/" + team, nil},
			{"GET", "/teams/" + team + "/members", nil},
			{"POST", "/teams/" + team + "/members", map[string]string{"user_id": w.stranger.UserID, "role": "lead"}},
			{"DELETE", "/teams/" + team + "/members/" + w.owner.UserID, nil},
			{"GET", "/tools", nil},
			{"PUT", "/tools", map[string]any{"tool": "tasks", "enabled": false}},
			{"GET", "/api-keys", nil},
			{"POST", "/api-keys", map[string]any{"name": "Outsider", "role": "admin"}},
			{"DELETE", "/api-keys/" + key, nil},
			{"GET", "/audit", nil},
			{"GET", "/domains", nil},
			{"POST", "/domains", map[string]string{"domain": wsDomain()}},
			{"PATCH", "/domains/" + claim, map[string]string{"mode": "auto_join"}},
			{"DELETE", "/domains/" + claim, nil},
			{"POST", "/domains/" + claim + "/verify", nil},
		}
		for _, rt := range routes {
			t.Run(rt.method+" "+rt.path, func(t *testing.T) {
				// Outside the key's workspace: 404, full-session route or not.
				keyStatus := 404
				wsRun(t, env, []wsCase{
					{name: "no token", method: rt.method, path: "/v1/orgs/" + w.org + rt.path, body: rt.body, wantStatus: 401},
					{name: "garbage token", method: rt.method, path: "/v1/orgs/" + w.org + rt.path, token: "not-a-jwt", body: rt.body, wantStatus: 401},
					{name: "stranger", method: rt.method, path: "/v1/orgs/" + w.org + rt.path, token: w.stranger.Access, body: rt.body, wantStatus: 404},
					{name: "member's key bound to another workspace", method: rt.method, path: "/v1/orgs/" + w.org + rt.path, token: memberKeyToken, body: rt.body, wantStatus: keyStatus},
					{name: "unknown org", method: rt.method, path: "/v1/orgs/" + uuid.NewString() + rt.path, token: w.owner.Access, body: rt.body, wantStatus: 404},
					{name: "malformed org id", method: rt.method, path: "/v1/orgs/acme" + rt.path, token: w.owner.Access, body: rt.body, wantStatus: 404},
					{name: "soft-deleted org of the caller", method: rt.method, path: "/v1/orgs/" + deleted + rt.path, token: w.owner.Access, body: rt.body, wantStatus: 404},
					{name: "another user's personal org", method: rt.method, path: "/v1/orgs/" + w.owner.OrgID + rt.path, token: w.stranger.Access, body: rt.body, wantStatus: 404},
				})
			})
		}

		t.Run("nothing changed", func(t *testing.T) {
			if got := wsTeams(t, env, w.owner.Access, w.org); len(got) != 1 || got[team]["name"] != "Platform" {
				t.Errorf("teams = %v; want Platform only, unchanged", got)
			}
			if got := wsTeamMembers(t, env, w.owner.Access, w.org, team); len(got) != 1 || got[w.owner.UserID] != "lead" {
				t.Errorf("team members = %v; want the owner as lead only", got)
			}
			if got := wsToolMatrix(t, wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/tools", w.owner.Access, nil).Want(t, 200)); len(got) != 7 || got[0] != "tasks=true" {
				t.Errorf("tools = %v; want all enabled", got)
			}
			if got := meList(t, wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/api-keys", w.owner.Access, nil).Want(t, 200), "api_keys"); len(got) != 1 {
				t.Errorf("api_keys = %v; want the one robot", got)
			}
			ds := meList(t, wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/domains", w.owner.Access, nil).Want(t, 200), "domains")
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
			domain := wsDomain()
			owners := make([]*testenv.Account, n)
			orgs := make([]string, n)
			claims := make([]string, n)
			var values []string
			for i := range n {
				owners[i] = env.Register(t)
				orgs[i] = meTeamOrg(t, env, "Racer", [2]string{owners[i].UserID, "owner"})
				c := wsClaim(t, env, owners[i].Access, orgs[i], domain, "")
				claims[i] = c["id"].(string)
				values = append(values, c["dns_record"].(map[string]any)["value"].(string))
			}
			env.DNS.SetTXT("_service."+domain, values...)
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					statuses[i] = wsRaw(env, "POST", "/v1/orgs/"+orgs[i]+"/domains/"+claims[i]+"/verify", owners[i].Access)
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
			w := wsNewWorld(t, env)
			domain := wsDomain()
			wsVerifiedDomain(t, env, w.owner.Access, w.org, domain, "suggest")
			u := wsVerifiedAt(t, env, domain)
			seen := wsAuditIDs(t, env, w.owner.Access, w.org)
			const n = 4
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					statuses[i] = wsRaw(env, "POST", "/v1/me/discoverable/join", u.Access)
				})
			}
			wg.Wait()
			for i, s := range statuses {
				if s != 200 {
					t.Errorf("join %d: status = %d; want 200", i, s)
				}
			}
			if got := wsRole(t, env, w.org, u.UserID); got != "member" {
				t.Errorf("role = %q; want member", got)
			}
			if got := wsNewEntries(t, env, w.owner.Access, w.org, seen); len(got) != 1 {
				t.Errorf("audit entries of the joins = %v; want exactly one member.joined", got)
			}
		})
	})
}
