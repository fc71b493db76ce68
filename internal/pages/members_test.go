package pages_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestConsoleMembers is the members page's permission table: each role
// sees only the forms its role allows (from the workspace's role table),
// a forged post for a forbidden change answers 403 and changes nothing,
// the last owner is kept (409, explained), a stranger gets 404; the
// directory is searched and paged on the server.
func TestConsoleMembers(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, billing, member := env.Register(t), env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Crew", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"},
			[2]string{billing.UserID, "billing"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/members"
		ob, ab, bb, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, billing), signedIn(t, env, member)
		roleForm := func(u *testenv.Account) string { return `id="role-` + u.UserID + `"` }

		res := ob.Get(t, path)
		wantPage(t, "owner", res, 200, "4 members", roleForm(admin), roleForm(member), `<option value="owner"`,
			`<option value="admin" selected>admin</option>`, `<option value="member" selected>member</option>`)
		if strings.Contains(res.Body, roleForm(owner)) {
			t.Fatalf("the owner gets a form for themself")
		}
		res = ab.Get(t, path)
		wantPage(t, "admin", res, 200, roleForm(member), roleForm(billing))
		if strings.Contains(res.Body, roleForm(owner)) || strings.Contains(res.Body, `<option value="owner"`) {
			t.Fatalf("an admin is offered owner changes")
		}
		for name, b := range map[string]*testenv.Browser{"billing": bb, "member": mb} {
			res := b.Get(t, path)
			wantPage(t, name, res, 200, "Your role does not let you change members")
			if strings.Contains(res.Body, "/members/role") || strings.Contains(res.Body, "/members/remove") {
				t.Fatalf("%s sees member forms", name)
			}
		}
		// Forged posts of forbidden changes: 403, nothing changed.
		wantPage(t, "member changes a role", mb.Post(t, path+"/role", url.Values{"user_id": {admin.UserID}, "role": {"member"}}), 403)
		wantPage(t, "billing removes", bb.Post(t, path+"/remove", url.Values{"confirm": {"yes"}, "user_id": {member.UserID}}), 403)
		wantPage(t, "admin makes an owner", ab.Post(t, path+"/role", url.Values{"user_id": {member.UserID}, "role": {"owner"}}), 403, "Only an owner can move")
		wantPage(t, "admin demotes the owner", ab.Post(t, path+"/role", url.Values{"user_id": {owner.UserID}, "role": {"member"}}), 403)
		wantPage(t, "cross-site", ob.PostCrossSite(t, path+"/role", url.Values{"user_id": {member.UserID}, "role": {"admin"}}), 403, "Request refused")
		for u, want := range map[*testenv.Account]string{owner: "owner", admin: "admin", billing: "billing", member: "member"} {
			if got := env.Role(t, org, u.UserID); got != want {
				t.Fatalf("after refused changes %s is %q; want %q", u.Email, got, want)
			}
		}
		wantPage(t, "last owner steps down", ob.Post(t, path+"/role", url.Values{"user_id": {owner.UserID}, "role": {"member"}}), 409,
			"needs at least one owner", roleForm(member))
		wantPage(t, "bad role", ob.Post(t, path+"/role", url.Values{"user_id": {member.UserID}, "role": {"king"}}), 400, "Role must be one of")

		wantRedirect(t, "owner promotes", ob.Post(t, path+"/role", url.Values{"user_id": {member.UserID}, "role": {"admin"}}), path+"?done=role")
		wantRedirect(t, "admin removes billing", ab.Post(t, path+"/remove", url.Values{"confirm": {"yes"}, "user_id": {billing.UserID}}), path+"?done=removed")
		if env.Role(t, org, member.UserID) != "admin" || env.Role(t, org, billing.UserID) != "" {
			t.Fatalf("roles after the changes: member %q billing %q", env.Role(t, org, member.UserID), env.Role(t, org, billing.UserID))
		}
		wantPage(t, "stranger", signedIn(t, env, env.Register(t)).Get(t, path), 404)
		wantPage(t, "removed member", bb.Get(t, path), 404)

		// Search and pages of 50.
		for i := range 55 {
			u := env.Register(t)
			env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', $3)`, org, u.UserID, int64(1000+i))
		}
		res = ob.Get(t, path)
		wantPage(t, "page 1", res, 200, "58 members", "page 1", "Next page")
		if n := strings.Count(res.Body, `<li class="row">`); n != 50 {
			t.Fatalf("page 1 lists %d; want 50", n)
		}
		res = ob.Get(t, path+"?page=2")
		wantPage(t, "page 2", res, 200, "Previous page")
		if n := strings.Count(res.Body, `<li class="row">`); n != 8 {
			t.Fatalf("page 2 lists %d; want 8", n)
		}
		res = ob.Get(t, path+"?q="+url.QueryEscape(strings.ToUpper(admin.Email)))
		wantPage(t, "search", res, 200, "1 member matching", admin.Email)
		wantPage(t, "page past the end", ob.Get(t, path+"?page=99"), 200, "page 2")
	})
}
