package scim_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScimProvisionRole: owners and admins choose the role the directory
// provisions with (never owner), audited; creates, reactivations and
// attached pending users get it; members already in keep theirs.
func TestScimProvisionRole(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		path := "/v1/orgs/" + w.Org + "/scim-settings"

		r := env.Call(t, "GET", path, w.Owner.Access, nil).Want(t, 200)
		if r.Str("scim_settings.provision_role") != "member" || r.Get("scim_settings.updated_by") != nil {
			t.Errorf("default settings %s; want member, never updated", r.Body)
		}
		for _, who := range []*testenv.Account{w.Member, w.Billing} {
			env.Call(t, "GET", path, who.Access, nil).Want(t, 403)
			env.Call(t, "PATCH", path, who.Access, map[string]string{"provision_role": "admin"}).Want(t, 403)
		}
		for _, bad := range []string{"owner", "Owner", "superuser", ""} {
			if r := env.Call(t, "PATCH", path, w.Owner.Access, map[string]string{"provision_role": bad}).Want(t, 400); !strings.Contains(r.Str("error"), "role") {
				t.Errorf("provision_role %q: %s; want 400 naming the role", bad, r.Body)
			}
		}
		r = env.Call(t, "PATCH", path, w.Admin.Access, map[string]string{"provision_role": "admin"}).Want(t, 200)
		if r.Str("scim_settings.provision_role") != "admin" || r.Str("scim_settings.updated_by") != w.Admin.UserID {
			t.Fatalf("set answered %s", r.Body)
		}
		if es := env.Audit(t, w.Owner.Access, w.Org, "action=identity.scim.settings_updated"); len(es) != 1 || es[0]["actor_id"] != w.Admin.UserID {
			t.Errorf("audit of the change: %v; want one entry by the admin", es)
		}

		// A create gets the role, whatever roles the resource claims.
		a := env.VerifiedAt(t, domain)
		body := userBody(a.Email, "r1", true)
		body["roles"] = []map[string]any{{"value": "owner", "primary": true}}
		id := d.do(t, "POST", "/Users", body).Want(t, 201).Str("id")
		if role := env.Role(t, w.Org, a.UserID); role != "admin" {
			t.Errorf("provisioned role %q; want admin", role)
		}
		// A reactivation gets the role of the day.
		d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "path": "active", "value": "False"})).Want(t, 200)
		env.Call(t, "PATCH", path, w.Owner.Access, map[string]string{"provision_role": "billing"}).Want(t, 200)
		d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "path": "active", "value": "True"})).Want(t, 200)
		if role := env.Role(t, w.Org, a.UserID); role != "billing" {
			t.Errorf("reactivated role %q; want billing", role)
		}
		// A member already in keeps their role.
		d.do(t, "POST", "/Users", userBody(w.Member.Email, "r2", true)).Want(t, 201)
		if role := env.Role(t, w.Org, w.Member.UserID); role != "member" {
			t.Errorf("existing member's role %q; want member kept", role)
		}
		// A pending address attaches with the role too.
		email := "later-" + testenv.RandomHex(4) + "@elsewhere.test"
		d.do(t, "POST", "/Users", userBody(email, "r3", true)).Want(t, 201)
		if role := env.Role(t, w.Org, magicSignIn(t, env, email).Str("user.id")); role != "billing" {
			t.Errorf("attached role %q; want billing", role)
		}
	})
}

// TestScimProvisionRoleOtherWorkspace: neither a SCIM token of workspace A
// nor A's owner can read or set workspace B's provisioning role, and a
// personal workspace has none.
func TestScimProvisionRoleOtherWorkspace(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.NewWorld(t), env.NewWorld(t)
		da, _ := newDirectory(t, env, a.Owner.Access, a.Org)
		path := "/v1/orgs/" + b.Org + "/scim-settings"
		env.Call(t, "GET", path, da.token, nil).Want(t, 401)
		env.Call(t, "GET", path, a.Owner.Access, nil).Want(t, 404)
		env.Call(t, "PATCH", path, da.token, map[string]string{"provision_role": "admin"}).Want(t, 401)
		env.Call(t, "PATCH", path, a.Owner.Access, map[string]string{"provision_role": "admin"}).Want(t, 404)
		if r := env.Call(t, "GET", path, b.Owner.Access, nil).Want(t, 200); r.Str("scim_settings.provision_role") != "member" {
			t.Errorf("B's role changed: %s", r.Body)
		}
		personal := env.Call(t, "GET", "/v1/auth/me", a.Owner.Access, nil).Want(t, 200).Str("org.id")
		if personal != a.Org {
			env.Call(t, "PATCH", "/v1/orgs/"+personal+"/scim-settings", a.Owner.Access, map[string]string{"provision_role": "admin"}).Want(t, 403)
		}
	})
}

// TestScimPendingJoinsGroupTeams: an address outside the verified domains,
// put in two groups while pending, joins both teams when its owner proves
// it, and no team before.
func TestScimPendingJoinsGroupTeams(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		email := "pend-" + testenv.RandomHex(4) + "@elsewhere.test"
		uid := d.do(t, "POST", "/Users", userBody(email, "p1", true)).Want(t, 201).Str("id")
		group := func(name string) string {
			return d.do(t, "POST", "/Groups", map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
				"displayName": name, "members": []map[string]any{{"value": uid}}}).Want(t, 201).Str("id")
		}
		g1 := group("Design")
		g2 := d.do(t, "POST", "/Groups", map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
			"displayName": "Research"}).Want(t, 201).Str("id")
		d.do(t, "PATCH", "/Groups/"+g2, patch(map[string]any{"op": "add", "path": "members", "value": []map[string]any{{"value": uid}}})).Want(t, 200)
		g3 := group("Gone")
		d.do(t, "DELETE", "/Groups/"+g3, nil).Want(t, 204)
		for _, g := range []string{g1, g2} {
			if m := env.TeamMembers(t, w.Owner.Access, w.Org, g); len(m) != 0 {
				t.Fatalf("team %s has members %v while the address is unproven", g, m)
			}
		}

		acct := magicSignIn(t, env, email).Str("user.id")
		if role := env.Role(t, w.Org, acct); role != "member" {
			t.Fatalf("after the proof the role is %q; want member", role)
		}
		for _, g := range []string{g1, g2} {
			if m := env.TeamMembers(t, w.Owner.Access, w.Org, g); m[acct] != "member" || len(m) != 1 {
				t.Errorf("team %s members %v; want the attached account", g, m)
			}
		}
		tok := orgToken(t, env, env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, email)}).Want(t, 200).Str("access_token"), w.Org)
		teams := env.Do(t, "GET", "/v1/orgs/"+w.Org+"/teams", tok, nil).Want(t, 200).List(t, "teams")
		mine := 0
		for _, tm := range teams {
			if tm["my_role"] == "member" {
				mine++
			}
		}
		if mine != 2 {
			t.Errorf("the attached account sees itself in %d teams; want 2", mine)
		}
	})
}
