package pages_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// orgName reads org id's name.
func orgName(t *testing.T, env *testenv.Env, id string) string {
	t.Helper()
	var name string
	if err := env.Store.DB().QueryRow(`SELECT name FROM orgs WHERE id = $1`, id).Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestConsoleWorkspacePages is the permission table of the overview,
// settings and audit pages: each role sees the links and forms its role
// allows (from the workspace's role table), a forged post for a forbidden
// change answers 403 and changes nothing.
func TestConsoleWorkspacePages(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, billing, member := env.Register(t), env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Harbour", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"},
			[2]string{billing.UserID, "billing"}, [2]string{member.UserID, "member"})
		base := "/workspaces/" + org
		ob, ab, bb, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, billing), signedIn(t, env, member)

		wantPage(t, "owner overview", ob.Get(t, base), 200, "<strong>owner</strong>", "<dt>Members</dt><dd><a", ">4</a>",
			`href="`+base+`/audit"`, `href="`+base+`/settings"`, `href="`+base+`/invitations"`)
		wantPage(t, "admin overview", ab.Get(t, base), 200, `href="`+base+`/audit"`, `href="`+base+`/settings"`)
		for name, b := range map[string]*testenv.Browser{"billing": bb, "member": mb} {
			res := b.Get(t, base)
			wantPage(t, name+" overview", res, 200, `href="`+base+`/teams"`, `href="`+base+`/tools"`)
			for _, p := range []string{"/audit", "/settings", "/invitations"} {
				if strings.Contains(res.Body, `href="`+base+p+`"`) {
					t.Fatalf("%s is offered %s", name, p)
				}
			}
			// The refusal is a signed-in page: sign-out, and the way back.
			wantPage(t, name+" audit", b.Get(t, base+"/audit"), 403, `action="/signout"`, `href="/">Back to your console`)
			wantPage(t, name+" settings", b.Get(t, base+"/settings"), 403)
			wantPage(t, name+" renames", b.Post(t, base+"/settings", url.Values{"name": {"Hijacked"}, "slug": {"hijacked"}}), 403)
			wantPage(t, name+" deletes", b.Post(t, base+"/delete", url.Values{"confirm": {"Harbour"}}), 403)
		}
		res := ab.Get(t, base+"/settings")
		wantPage(t, "admin settings", res, 200, `value="Harbour"`, "Only an owner can delete")
		if strings.Contains(res.Body, base+"/delete") {
			t.Fatalf("an admin is offered the delete form")
		}
		wantPage(t, "admin deletes", ab.Post(t, base+"/delete", url.Values{"confirm": {"Harbour"}}), 403)
		wantPage(t, "cross-site rename", ob.PostCrossSite(t, base+"/settings", url.Values{"name": {"Hijacked"}}), 403)
		if got := orgName(t, env, org); got != "Harbour" || env.OrgDeleted(t, org) {
			t.Fatalf("after refused changes the workspace is %q (deleted %v)", got, env.OrgDeleted(t, org))
		}
		wantPage(t, "stranger", signedIn(t, env, env.Register(t)).Get(t, base), 404, `href="/">Back to your console`)

		// Settings: bad input kept next to its field; a good change saved.
		wantPage(t, "bad slug", ob.Post(t, base+"/settings", url.Values{"name": {"Harbour"}, "slug": {"Not A Slug"}}), 400,
			`id="slug-error"`, `value="Not A Slug"`, "Slug must be")
		wantRedirect(t, "rename", ab.Post(t, base+"/settings", url.Values{"name": {"Port"}, "slug": {"port-" + org[:8]}}), base+"/settings?done=org-saved")
		wantRedirect(t, "unchanged", ab.Post(t, base+"/settings", url.Values{"name": {"Port"}, "slug": {"port-" + org[:8]}}), base+"/settings?done=org-saved")
		if got := orgName(t, env, org); got != "Port" {
			t.Fatalf("renamed workspace is %q", got)
		}

		// Audit: entries with actor names and readable meta, filtered, a bad limit explained.
		wantRedirect(t, "role", ob.Post(t, base+"/members/role", url.Values{"user_id": {member.UserID}, "role": {"admin"}}), base+"/members?done=role")
		env.Exec(t, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, meta, at) VALUES ($1, $2, 'org', 'ghost.acted', $3, '{}', 1)`,
			"00000000-0000-4000-8000-"+testenv.RandomHex(6), org, "00000000-0000-4000-8000-0000000000ff")
		res = ob.Get(t, base+"/audit")
		wantPage(t, "audit", res, 200, `"item-title">Member&#39;s role changed<`, `"item-title">Workspace settings changed<`,
			"by "+owner.Name, "by "+admin.Name, "<dt>new role</dt><dd>admin</dd>", "by Deleted person", "person “"+member.Name+"”")
		if strings.Contains(res.Body, "00000000-0000-4000-8000-0000000000ff") || strings.Contains(res.Body, member.UserID) {
			t.Fatalf("the audit page shows a bare id")
		}
		res = ab.Get(t, base+"/audit?action=identity.org.updated&limit=5")
		wantPage(t, "filtered", res, 200, `"item-title">Workspace settings changed<`, `<option value="identity.org.updated" selected>`)
		if strings.Contains(res.Body, `"item-title">Member&#39;s role changed`) {
			t.Fatalf("the action filter lets other actions through")
		}
		res = ob.Get(t, base+"/audit?tool=org")
		wantPage(t, "by tool", res, 200, `<option value="org" selected>`, `"item-title">ghost.acted`)
		if strings.Contains(res.Body, `<span class="badge">identity</span>`) {
			t.Fatalf("the tool filter lets other tools' entries through")
		}
		wantPage(t, "bad limit", ob.Get(t, base+"/audit?limit=0"), 400, `id="limit-error"`, `value="0"`)

		// Delete: the name must be typed; then the workspace is gone.
		wantPage(t, "mistyped", ob.Post(t, base+"/delete", url.Values{"confirm": {"Harbour"}}), 400, `id="confirm-error"`, `value="Harbour"`)
		if env.OrgDeleted(t, org) {
			t.Fatalf("a mistyped confirmation deleted the workspace")
		}
		wantRedirect(t, "delete", ob.Post(t, base+"/delete", url.Values{"confirm": {"Port"}}), "/account/workspaces?done=org-deleted")
		if !env.OrgDeleted(t, org) {
			t.Fatalf("the workspace is not deleted")
		}
		wantPage(t, "deleted", ob.Get(t, base), 404)
	})
}

// TestConsoleTeams: any member creates a team and leads it, adds a member
// by address; others see no forms and their forged posts answer 403.
func TestConsoleTeams(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, lead, billing := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Rowers", [2]string{owner.UserID, "owner"}, [2]string{lead.UserID, "member"}, [2]string{billing.UserID, "billing"})
		base := "/workspaces/" + org + "/teams"
		lb, bb, ob := signedIn(t, env, lead), signedIn(t, env, billing), signedIn(t, env, owner)

		wantPage(t, "empty", lb.Get(t, base), 200, "no teams yet")
		wantPage(t, "no name", lb.Post(t, base, url.Values{"name": {" "}, "description": {"kept"}}), 400, `id="name-error"`, ">kept</textarea>")
		res := lb.Post(t, base, url.Values{"name": {"Crew"}})
		if res.Status != 303 || !strings.HasPrefix(res.Location(), base+"/") {
			t.Fatalf("create: %d %q", res.Status, res.Location())
		}
		team := strings.TrimPrefix(strings.TrimSuffix(res.Location(), "?done=team-created"), base+"/")
		wantPage(t, "lead's team", lb.Get(t, base+"/"+team), 200, "You", "lead", "Add a member")
		wantPage(t, "unknown address", lb.Post(t, base+"/"+team+"/members", url.Values{"email": {"nobody@example.com"}, "role": {"lead"}}), 400,
			`id="email-error"`, `value="nobody@example.com"`, `<option value="lead" selected>`)
		wantRedirect(t, "add", lb.Post(t, base+"/"+team+"/members", url.Values{"email": {strings.ToUpper(billing.Email)}}), base+"/"+team+"?done=team-member")

		res = bb.Get(t, base+"/"+team)
		wantPage(t, "billing sees", res, 200, billing.Email, "Only the team's lead")
		if strings.Contains(res.Body, "Add a member") || strings.Contains(res.Body, `name="user_id" value="`+lead.UserID) {
			t.Fatalf("a plain team member sees the lead's forms")
		}
		wantPage(t, "billing adds", bb.Post(t, base+"/"+team+"/members", url.Values{"email": {owner.Email}}), 403)
		wantPage(t, "billing removes the lead", bb.Post(t, base+"/"+team+"/remove", url.Values{"user_id": {lead.UserID}}), 403)
		wantPage(t, "billing deletes", bb.Post(t, base+"/delete", url.Values{"confirm": {"yes"}, "team_id": {team}}), 403)
		wantPage(t, "billing renames", bb.Post(t, base+"/"+team, url.Values{"name": {"Hijacked"}}), 403)
		wantPage(t, "empty name", lb.Post(t, base+"/"+team, url.Values{"name": {" "}, "description": {"kept too"}}), 400,
			`id="name-error"`, ">kept too</textarea>")
		wantRedirect(t, "rename", lb.Post(t, base+"/"+team, url.Values{"name": {"Eights"}, "description": {"Rowing"}}), base+"/"+team+"?done=team-saved")
		wantPage(t, "renamed", bb.Get(t, base+"/"+team), 200, "Rowers: Eights", "Rowing")
		wantPage(t, "still two", ob.Get(t, base), 200, "2 members", `aria-label="Delete team Eights"`)
		wantRedirect(t, "billing leaves", bb.Post(t, base+"/"+team+"/remove", url.Values{"user_id": {billing.UserID}}), base+"/"+team+"?done=team-removed")
		wantRedirect(t, "owner deletes", ob.Post(t, base+"/delete", url.Values{"confirm": {"yes"}, "team_id": {team}}), base+"?done=team-deleted")
		wantPage(t, "gone", lb.Get(t, base+"/"+team), 404)
	})
}

// TestOrgSettingsRefusalTakesNoLock: a refused settings change (a bad
// slug, a bad name, a role without the permission, the page of such a
// role) is decided before UpdateOrg's write transaction, so it answers
// while another transaction holds the workspace's row for writing (a
// refusal that locked the row, as the empty UpdateOrg did, would wait for
// it), and the workspace and its audit log are unchanged. The row is held
// on PostgreSQL only: SQLite locks the whole database, and a signed-in post
// writes its session there before any workspace code runs.
func TestOrgSettingsRefusalTakesNoLock(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Quay", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		base := "/workspaces/" + org
		ob, mb := signedIn(t, env, owner), signedIn(t, env, member)
		audit := func() (n int) {
			t.Helper()
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM audit_log WHERE org_id = $1`, org).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		entries := audit()
		tx, err := env.Store.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if env.DB == "postgres" {
			if _, err := tx.Exec(`UPDATE orgs SET name = name WHERE id = $1`, org); err != nil {
				t.Fatal(err)
			}
		} else {
			tx.Rollback()
		}
		for _, c := range []struct {
			what   string
			do     func() *testenv.Page
			status int
		}{
			{"bad slug", func() *testenv.Page {
				return ob.Post(t, base+"/settings", url.Values{"name": {"Quay"}, "slug": {"Not A Slug"}})
			}, 400},
			{"bad name", func() *testenv.Page { return ob.Post(t, base+"/settings", url.Values{"name": {" "}}) }, 400},
			{"member renames", func() *testenv.Page { return mb.Post(t, base+"/settings", url.Values{"name": {"Hijacked"}}) }, 403},
			{"member's page", func() *testenv.Page { return mb.Get(t, base+"/settings") }, 403},
		} {
			answer := make(chan *testenv.Page, 1)
			go func() { answer <- c.do() }()
			select {
			case res := <-answer:
				wantPage(t, c.what, res, c.status)
			case <-time.After(3 * time.Second):
				tx.Rollback()
				<-answer
				t.Fatalf("%s: no answer while the workspace's row is locked: the refusal waits for a write transaction", c.what)
			}
		}
		tx.Rollback()
		if got := orgName(t, env, org); got != "Quay" || audit() != entries {
			t.Fatalf("after refusals the workspace is %q with %d audit entries (was %d)", got, audit(), entries)
		}
	})
}
