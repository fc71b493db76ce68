package scim_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScimGroups: a group is a managed team; members move in and out by
// PATCH (Okta's value arrays, Entra's capitalised ops and filtered
// removes); a deactivated user leaves the team and comes back with
// reactivation; hand edits of a managed team's membership answer 409;
// rename by PATCH and PUT; delete removes the team; another workspace's
// token sees none of it.
func TestScimGroups(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		a, b := env.VerifiedAt(t, domain), env.VerifiedAt(t, domain)
		ua := d.do(t, "POST", "/Users", userBody(a.Email, "ga", true)).Want(t, 201).Str("id")
		ub := d.do(t, "POST", "/Users", userBody(b.Email, "gb", true)).Want(t, 201).Str("id")

		g := d.do(t, "POST", "/Groups", map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
			"displayName": "Engineering", "externalId": "grp-1", "members": []map[string]any{{"value": ua}}}).Want(t, 201)
		gid := g.Str("id")
		if g.Str("displayName") != "Engineering" || g.Str("meta.resourceType") != "Group" || len(g.List(t, "members")) != 1 {
			t.Fatalf("create group answered %s", g.Body)
		}
		members := func() map[string]string { return env.TeamMembers(t, w.Owner.Access, w.Org, gid) }
		if m := members(); m[a.UserID] == "" || len(m) != 1 {
			t.Fatalf("team members %v; want only a", m)
		}
		// Okta adds and removes with value arrays.
		d.do(t, "PATCH", "/Groups/"+gid, patch(map[string]any{"op": "add", "path": "members", "value": []map[string]any{{"value": ub}}})).Want(t, 200)
		if m := members(); m[b.UserID] == "" || len(m) != 2 {
			t.Fatalf("after add: %v; want a and b", m)
		}
		d.do(t, "PATCH", "/Groups/"+gid, patch(map[string]any{"op": "remove", "path": "members", "value": []map[string]any{{"value": ua}}})).Want(t, 200)
		if m := members(); m[a.UserID] != "" || len(m) != 1 {
			t.Fatalf("after remove: %v; want b", m)
		}
		// Entra: capitalised ops, a filtered remove, a rename without path.
		d.do(t, "PATCH", "/Groups/"+gid, patch(map[string]any{"op": "Add", "path": "members", "value": []map[string]any{{"value": ua}}})).Want(t, 200)
		r := d.do(t, "PATCH", "/Groups/"+gid, patch(
			map[string]any{"op": "Remove", "path": `members[value eq "` + ub + `"]`},
			map[string]any{"op": "Replace", "value": map[string]any{"displayName": "Platform"}})).Want(t, 200)
		if r.Str("displayName") != "Platform" || len(r.List(t, "members")) != 1 {
			t.Errorf("Entra PATCH answered %s", r.Body)
		}
		if teams := env.Teams(t, w.Owner.Access, w.Org); teams[gid]["name"] != "Platform" {
			t.Errorf("the team was not renamed: %v", teams[gid])
		}
		d.do(t, "PATCH", "/Groups/"+gid, patch(map[string]any{"op": "add", "path": "members", "value": []map[string]any{{"value": "nobody"}}})).Want(t, 400)

		// Deactivation takes a out of the team; reactivation brings them back.
		d.do(t, "PATCH", "/Users/"+ua, patch(map[string]any{"op": "replace", "path": "active", "value": false})).Want(t, 200)
		if m := members(); m[a.UserID] != "" {
			t.Errorf("a deactivated user is still in the team")
		}
		d.do(t, "PATCH", "/Users/"+ua, patch(map[string]any{"op": "replace", "path": "active", "value": true})).Want(t, 200)
		if m := members(); m[a.UserID] == "" {
			t.Errorf("a reactivated user is not back in the team")
		}

		// Hand edits of a managed team's membership: 409 with the reason.
		r = env.Do(t, "POST", "/v1/orgs/"+w.Org+"/teams/"+gid+"/members", w.Owner.Access, map[string]string{"user_id": w.Member.UserID}).Want(t, 409)
		if msg := r.Str("error"); msg == "" {
			t.Errorf("409 without a reason")
		}
		env.Do(t, "DELETE", "/v1/orgs/"+w.Org+"/teams/"+gid+"/members/"+a.UserID, w.Owner.Access, nil).Want(t, 409)
		env.Clock.Advance(time.Second) // past the second of a's removal, whose tokens it refuses
		env.Do(t, "DELETE", "/v1/orgs/"+w.Org+"/teams/"+gid+"/members/"+a.UserID, orgToken(t, env, a.Access, w.Org), nil).Want(t, 409)

		put := map[string]any{"displayName": "Platform Team", "members": []map[string]any{{"value": ub}}}
		r = d.do(t, "PUT", "/Groups/"+gid, put).Want(t, 200)
		if m := members(); r.Str("displayName") != "Platform Team" || m[b.UserID] == "" || m[a.UserID] != "" {
			t.Errorf("PUT: %s, members %v", r.Body, m)
		}
		if n := total(t, d.do(t, "GET", "/Groups?filter="+urlQuery(`displayName eq "Platform Team"`), nil).Want(t, 200)); n != 1 {
			t.Errorf("filter by displayName found %d", n)
		}
		if l := d.do(t, "GET", "/Groups?excludedAttributes=members", nil).Want(t, 200).List(t, "Resources"); len(l) != 1 || l[0]["members"] != nil {
			t.Errorf("excludedAttributes=members: %v", l)
		}
		other := env.NewWorld(t)
		od, _ := newDirectory(t, env, other.Owner.Access, other.Org)
		od.do(t, "GET", "/Groups/"+gid, nil).Want(t, 404)
		od.do(t, "PATCH", "/Groups/"+gid, patch(map[string]any{"op": "add", "path": "members", "value": []map[string]any{{"value": ua}}})).Want(t, 404)
		od.do(t, "DELETE", "/Groups/"+gid, nil).Want(t, 404)

		d.do(t, "DELETE", "/Groups/"+gid, nil).Want(t, 204)
		d.do(t, "GET", "/Groups/"+gid, nil).Want(t, 404)
		if _, ok := env.Teams(t, w.Owner.Access, w.Org)[gid]; ok {
			t.Errorf("the team outlived its group")
		}
	})
}
