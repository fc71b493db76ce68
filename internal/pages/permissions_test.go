package pages_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// workspaceState is what the workspace pages can change in org, read from
// the database: a forged post that is refused must leave it as it was.
func workspaceState(t *testing.T, env *testenv.Env, org string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT name || ' ' || slug || ' ' || CASE WHEN deleted_at IS NULL THEN 'live' ELSE 'deleted' END FROM orgs WHERE id = $1`,
		`SELECT COUNT(*) FROM invitations WHERE org_id = $1 AND revoked_at IS NULL`,
		`SELECT COUNT(*) FROM api_keys WHERE org_id = $1 AND kind = 'org' AND revoked_at IS NULL`,
		`SELECT COUNT(*) FROM domains WHERE org_id = $1`,
		`SELECT COUNT(*) FROM teams WHERE org_id = $1`,
		`SELECT COUNT(*) FROM org_tools WHERE org_id = $1 AND NOT enabled`,
		`SELECT COUNT(*) FROM memberships WHERE org_id = $1 AND role = 'member'`,
	} {
		var v any
		if err := env.Store.DB().QueryRow(q, org).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&b, "%v|", v)
	}
	return b.String()
}

// regexpFirst is the first group of pattern in body.
func regexpFirst(t *testing.T, body, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in:\n%.3000s", pattern, body)
	}
	return m[1]
}

// TestConsolePermissionTable is issue 14's permission table in one place:
// for owner, admin, billing and member, each workspace page answers 200 or
// 403 and offers its forms exactly as the domain's role table
// (workspace.RoleHas) says, and every forbidden action posted by hand
// answers 403 and changes nothing.
func TestConsolePermissionTable(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		accounts := map[string]*testenv.Account{}
		var members [][2]string
		for _, role := range []string{"owner", "admin", "billing", "member"} {
			accounts[role] = env.Register(t)
			members = append(members, [2]string{accounts[role].UserID, role})
		}
		target := env.Register(t) // a member the others' forms act on
		org := env.TeamOrg(t, "Table", append(members, [2]string{target.UserID, "member"})...)
		base := "/workspaces/" + org
		// One thing of each kind to act on.
		ob := signedIn(t, env, accounts["owner"])
		wantRedirect(t, "invite", ob.Post(t, base+"/invitations", url.Values{"kind": {"link"}}), base+"/invitations")
		inv := regexpFirst(t, ob.Get(t, base+"/invitations").Body, `name="invitation_id" value="([^"]+)"`)
		wantRedirect(t, "key", ob.Post(t, base+"/keys", url.Values{"name": {"ci"}, "role": {"member"}, "expires_in_days": {"30"}}), base+"/keys")
		key := regexpFirst(t, ob.Get(t, base+"/keys").Body, `name="key_id" value="([^"]+)"`)
		ob.Post(t, base+"/domains", url.Values{"domain": {"table-" + testenv.RandomHex(4) + ".test"}, "mode": {"suggest"}})
		domain := regexpFirst(t, ob.Get(t, base+"/domains").Body, `name="domain_id" value="([^"]+)"`)
		before := workspaceState(t, env, org)

		type pageCase struct {
			path string
			see  workspace.Permission // "" : every member sees the page
			form string               // the form the permission offers
			act  workspace.Permission
			post url.Values // a forged post of that form
		}
		cases := []pageCase{
			{"/invitations", workspace.PermMembers, `action="` + base + `/invitations/revoke"`, workspace.PermMembers, url.Values{"kind": {"link"}}},
			{"/invitations/revoke", "", "", workspace.PermMembers, url.Values{"invitation_id": {inv}}},
			{"/tools", "", `aria-label="Turn off tasks"`, workspace.PermTools, url.Values{"tool": {"tasks"}, "enabled": {"false"}}},
			{"/keys", workspace.PermSettings, `action="` + base + `/keys"`, workspace.PermSettings, url.Values{"name": {"forged"}, "role": {"admin"}, "expires_in_days": {"30"}}},
			{"/keys/revoke", "", "", workspace.PermSettings, url.Values{"key_id": {key}, "confirm": {"yes"}}},
			{"/domains", workspace.PermDomains, `action="` + base + `/domains"`, workspace.PermDomains, url.Values{"domain": {"forged.test"}, "mode": {"suggest"}}},
			{"/domains/delete", "", "", workspace.PermDomains, url.Values{"domain_id": {domain}, "confirm": {"yes"}}},
			{"/domains/mode", "", "", workspace.PermDomains, url.Values{"domain_id": {domain}, "mode": {"auto_join"}}},
			{"/audit", workspace.PermSettings, "", "", nil},
			{"/settings", workspace.PermSettings, `action="` + base + `/settings"`, workspace.PermSettings, url.Values{"name": {"Forged"}, "slug": {"forged"}}},
			{"/delete", "", "", workspace.PermDelete, url.Values{"confirm": {"Table"}}},
			{"/members/role", "", "", workspace.PermMembers, url.Values{"user_id": {target.UserID}, "role": {"admin"}}},
			{"/members/remove", "", "", workspace.PermMembers, url.Values{"user_id": {target.UserID}, "confirm": {"yes"}}},
		}
		for _, role := range []string{"owner", "admin", "billing", "member"} {
			b := signedIn(t, env, accounts[role])
			for _, pc := range cases {
				if strings.HasSuffix(pc.path, "/revoke") || strings.HasSuffix(pc.path, "/delete") || strings.HasSuffix(pc.path, "/mode") ||
					strings.HasPrefix(pc.path, "/members/") {
					// An action without a page of its own.
				} else {
					res := b.Get(t, base+pc.path)
					want := 200
					if pc.see != "" && !workspace.RoleHas(role, pc.see) {
						want = 403
					}
					wantPage(t, role+" GET "+pc.path, res, want)
					if want == 200 && pc.form != "" && strings.Contains(res.Body, pc.form) != workspace.RoleHas(role, pc.act) {
						t.Errorf("%s on %s: form %q shown %v; the role table says %v", role, pc.path, pc.form, !workspace.RoleHas(role, pc.act), workspace.RoleHas(role, pc.act))
					}
				}
				if pc.post != nil && !workspace.RoleHas(role, pc.act) {
					wantPage(t, role+" POST "+pc.path, b.Post(t, base+pc.path, pc.post), 403)
				}
			}
			// The overview links only to the pages the role may open.
			res := b.Get(t, base)
			for _, pc := range cases {
				if pc.see != "" && strings.Contains(res.Body, `href="`+base+pc.path+`"`) != workspace.RoleHas(role, pc.see) {
					t.Errorf("%s's overview links to %s: %v; the role table says %v", role, pc.path, !workspace.RoleHas(role, pc.see), workspace.RoleHas(role, pc.see))
				}
			}
		}
		if after := workspaceState(t, env, org); after != before {
			t.Fatalf("refused posts changed the workspace: %s → %s", before, after)
		}
	})
}
