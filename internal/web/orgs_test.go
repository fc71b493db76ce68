package web_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestCreateOrg covers POST /v1/orgs (spec 4.3 rule 1).
func TestCreateOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		u := orgsRegister(t, env)
		runOrgsCases(t, env, []orgsCase{
			{"no token", "POST", "/v1/orgs", map[string]string{"name": "Acme"}, "", 401},
			{"bad token", "POST", "/v1/orgs", map[string]string{"name": "Acme"}, "nope", 401},
			{"name missing", "POST", "/v1/orgs", map[string]string{}, u.Token, 400},
			{"empty body", "POST", "/v1/orgs", nil, u.Token, 400},
			{"name one character", "POST", "/v1/orgs", map[string]string{"name": "a"}, u.Token, 400},
			{"name one character after trim", "POST", "/v1/orgs", map[string]string{"name": "  a  "}, u.Token, 400},
			{"name not a string", "POST", "/v1/orgs", map[string]any{"name": 12}, u.Token, 400},
			{"not JSON", "POST", "/v1/orgs", "{", u.Token, 400},
		})

		t.Run("creates owner org and token", func(t *testing.T) {
			// Names and slugs are random: on PostgreSQL one database serves
			// every run of the test binary.
			hex := testenv.RandomHex(3)
			r := env.Do(t, "POST", "/v1/orgs", u.Token, map[string]string{"name": "  Acme Rockets " + hex + " "}).Want(t, 200)
			org, _ := r.Get("org").(map[string]any)
			for _, k := range []string{"id", "name", "slug", "avatar_url", "kind", "created_at"} {
				if _, ok := org[k]; !ok {
					t.Errorf("org = %v; want field %s", org, k)
				}
			}
			if _, ok := org["tools"]; ok {
				t.Errorf("org = %v; want no tools field", org)
			}
			if org["name"] != "Acme Rockets "+hex || org["slug"] != "acme-rockets-"+hex || org["kind"] != "team" {
				t.Errorf("org = %v; want name %q, slug %q, kind team", org, "Acme Rockets "+hex, "acme-rockets-"+hex)
			}
			if r.Str("access_token") == "" || r.Str("expires_at") == "" {
				t.Fatalf("answer = %s; want access_token and expires_at", r.Body)
			}
			id := r.Str("org.id")
			c := orgsClaims(t, r.Str("access_token"))
			oc, _ := c["org"].(map[string]any)
			if oc["id"] != id || oc["role"] != "owner" {
				t.Errorf("token org claim = %v; want id %s role owner", oc, id)
			}
			before := orgsClaims(t, u.Account.Access)
			if c["via"] != before["via"] || c["sid"] != before["sid"] || c["sid"] == nil {
				t.Errorf("token via, sid = %v, %v; want the caller's %v, %v", c["via"], c["sid"], before["via"], before["sid"])
			}
			roles := orgsRoles(t, env, r.Str("access_token"), id)
			if len(roles) != 1 || roles[u.UserID] != "owner" {
				t.Errorf("members = %v; want only the creator as owner", roles)
			}
			// It became the default: a new sign-in lands there.
			login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": u.Email, "password": u.Password}).Want(t, 200)
			if got := login.Str("org.id"); got != id {
				t.Errorf("login org = %s; want the new org %s", got, id)
			}
		})

		t.Run("same name gets a unique slug", func(t *testing.T) {
			a := env.Do(t, "POST", "/v1/orgs", u.Token, map[string]string{"name": "Twin Peaks"}).Want(t, 200)
			b := env.Do(t, "POST", "/v1/orgs", u.Token, map[string]string{"name": "Twin Peaks"}).Want(t, 200)
			if a.Str("org.slug") == b.Str("org.slug") {
				t.Errorf("slugs = %q and %q; want different", a.Str("org.slug"), b.Str("org.slug"))
			}
		})

		t.Run("key token cannot create", func(t *testing.T) {
			tok := orgsKeyToken(t, env, u.Token, u.OrgID, "owner")
			env.Do(t, "POST", "/v1/orgs", tok, map[string]string{"name": "Keyed"}).Want(t, 403)
		})
	})
}

// TestGetOrg covers GET /v1/orgs/{id}: the profile with its counts.
func TestGetOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		member := orgsJoin(t, env, owner, org, "member")
		stranger := orgsRegister(t, env)
		runOrgsCases(t, env, []orgsCase{
			{"owner", "GET", "/v1/orgs/" + org, nil, owner.Token, 200},
			{"member with a token of another org", "GET", "/v1/orgs/" + org, nil, member.Account.Access, 200},
			{"stranger", "GET", "/v1/orgs/" + org, nil, stranger.Token, 404},
			{"unknown id", "GET", "/v1/orgs/00000000-0000-4000-8000-000000000000", nil, owner.Token, 404},
			{"not an id", "GET", "/v1/orgs/acme", nil, owner.Token, 404},
			{"no token", "GET", "/v1/orgs/" + org, nil, "", 401},
			{"personal org", "GET", "/v1/orgs/" + stranger.OrgID, nil, stranger.Token, 200},
		})
		live, gone := uuid.NewString(), uuid.NewString()
		if _, err := env.Store.DB().Exec(`INSERT INTO teams (id, org_id, name, created_at) VALUES ($1, $2, 'Live', 1), ($3, $2, 'Gone', 1)`,
			live, org, gone); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Store.DB().Exec(`UPDATE teams SET deleted_at = 2 WHERE id = $1`, gone); err != nil {
			t.Fatal(err)
		}
		r := env.Do(t, "GET", "/v1/orgs/"+org, member.Token, nil).Want(t, 200)
		if r.Get("org.member_count") != float64(2) || r.Get("org.team_count") != float64(1) || r.Str("org.id") != org || r.Str("org.kind") != "team" {
			t.Errorf("profile = %s; want id %s, kind team, member_count 2, team_count 1 (live teams)", r.Body, org)
		}
		if r.Get("org.tools") != nil {
			t.Errorf("profile = %s; want no tools", r.Body)
		}
	})
}

// TestUpdateOrg covers PATCH /v1/orgs/{id}.
func TestUpdateOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		other := orgsRegister(t, env)
		taken, fresh := "taken-"+testenv.RandomHex(4), "fresh-"+testenv.RandomHex(4)
		orgsCreate(t, env, other, taken)
		cur := env.Do(t, "GET", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
		name, slug := cur.Str("org.name"), cur.Str("org.slug")
		p := "/v1/orgs/" + org
		runOrgsCases(t, env, []orgsCase{
			{"empty body", "PATCH", p, nil, owner.Token, 400},
			{"empty object", "PATCH", p, map[string]any{}, owner.Token, 400},
			{"all null", "PATCH", p, map[string]any{"name": nil, "slug": nil, "avatar_url": nil}, owner.Token, 400},
			{"same name", "PATCH", p, map[string]any{"name": name}, owner.Token, 400},
			{"same name padded", "PATCH", p, map[string]any{"name": " " + name + " "}, owner.Token, 400},
			{"same slug", "PATCH", p, map[string]any{"slug": slug}, owner.Token, 400},
			{"same avatar", "PATCH", p, map[string]any{"avatar_url": ""}, owner.Token, 400},
			{"name too short", "PATCH", p, map[string]any{"name": "x"}, owner.Token, 400},
			{"slug with capitals", "PATCH", p, map[string]any{"slug": "Acme"}, owner.Token, 400},
			{"slug with space", "PATCH", p, map[string]any{"slug": "ac me"}, owner.Token, 400},
			{"slug one character", "PATCH", p, map[string]any{"slug": "a"}, owner.Token, 400},
			{"slug leading hyphen", "PATCH", p, map[string]any{"slug": "-acme"}, owner.Token, 400},
			{"slug 41 characters", "PATCH", p, map[string]any{"slug": "a2345678901234567890123456789012345678901"}, owner.Token, 400},
			{"avatar not http", "PATCH", p, map[string]any{"avatar_url": "javascript:alert(1)"}, owner.Token, 400},
			{"slug taken", "PATCH", p, map[string]any{"slug": taken}, owner.Token, 409},
			{"name not a string", "PATCH", p, map[string]any{"name": 5}, owner.Token, 400},
		})

		r := env.Do(t, "PATCH", p, owner.Token, map[string]any{"name": "New Name", "slug": slug, "avatar_url": "https://img.test/a.png"}).Want(t, 200)
		if r.Str("org.name") != "New Name" || r.Str("org.slug") != slug || r.Str("org.avatar_url") != "https://img.test/a.png" || r.Get("org.member_count") != float64(1) {
			t.Errorf("patched = %s; want name New Name, slug %s, avatar set, member_count 1", r.Body, slug)
		}
		r = env.Do(t, "PATCH", p, owner.Token, map[string]any{"slug": fresh}).Want(t, 200)
		if r.Str("org.slug") != fresh || r.Str("org.name") != "New Name" {
			t.Errorf("patched = %s; want slug %s and the name kept", r.Body, fresh)
		}
		if g := env.Do(t, "GET", p, owner.Token, nil).Want(t, 200); g.Str("org.slug") != fresh {
			t.Errorf("GET after PATCH = %s; want slug %s", g.Body, fresh)
		}
		// The old slug is free again.
		orgsCreate(t, env, other, slug)
		r = env.Do(t, "PATCH", "/v1/orgs/"+other.OrgID, other.Account.Access, map[string]any{"name": "Mine"})
		if r.Status != 403 {
			t.Errorf("PATCH personal org: status = %d; want 403", r.Status)
		}
	})
}

// TestDeleteOrg covers DELETE /v1/orgs/{id} and what a deleted org leaves.
func TestDeleteOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		admin := orgsJoin(t, env, owner, org, "admin")
		member := orgsJoin(t, env, owner, org, "member")
		pending := orgsInvite(t, env, owner.Token, org, "later@example.com", "member")
		link := orgsLink(t, env, owner.Token, org)
		p := "/v1/orgs/" + org
		runOrgsCases(t, env, []orgsCase{
			{"no token", "DELETE", p, nil, "", 401},
			{"key token", "DELETE", p, nil, orgsKeyToken(t, env, owner.Token, org, "owner"), 403},
			{"admin", "DELETE", p, nil, admin.Token, 403},
			{"member", "DELETE", p, nil, member.Token, 403},
			{"personal org", "DELETE", "/v1/orgs/" + owner.OrgID, nil, owner.Token, 403},
			{"unknown", "DELETE", "/v1/orgs/00000000-0000-4000-8000-000000000000", nil, owner.Token, 404},
			{"owner", "DELETE", p, nil, owner.Token, 200},
			{"again", "DELETE", p, nil, owner.Token, 404},
			{"GET by owner", "GET", p, nil, owner.Token, 404},
			{"GET by member", "GET", p, nil, member.Token, 404},
			{"members", "GET", p + "/members", nil, admin.Token, 404},
			{"PATCH", "PATCH", p, map[string]any{"name": "Zombie"}, owner.Token, 404},
			{"invitations", "GET", p + "/invitations", nil, owner.Token, 404},
			{"preview email invitation", "GET", "/v1/invitations/" + pending, nil, "", 410},
			{"preview link invitation", "GET", "/v1/invitations/" + link, nil, "", 410},
			{"accept link invitation", "POST", "/v1/invitations/" + link + "/accept", nil, orgsRegister(t, env).Token, 410},
			{"switch-org", "POST", "/v1/auth/switch-org", map[string]string{"org_id": org}, member.Token, 403},
			{"me with a token scoped to it", "GET", "/v1/auth/me", nil, member.Token, 404},
		})
		// Users whose default it was fall back to their personal org.
		for _, u := range []*orgsUser{owner, admin, member} {
			login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": u.Email, "password": u.Password}).Want(t, 200)
			if got := login.Str("org.id"); got != u.OrgID {
				t.Errorf("login after delete lands in %s; want personal org %s", got, u.OrgID)
			}
		}
		var def *string
		if err := env.Store.DB().QueryRow(`SELECT default_org_id FROM users WHERE id = $1`, member.UserID).Scan(&def); err != nil {
			t.Fatal(err)
		}
		if def != nil && *def == org {
			t.Errorf("default_org_id still points at the deleted org")
		}
	})
}

// TestOrgRoutesCrossWorkspace tries every org-scoped route with a stranger's
// token: all read as 404, never 403.
func TestOrgRoutesCrossWorkspace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		member := orgsJoin(t, env, owner, org, "member")
		env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"kind": "link"}).Want(t, 200)
		list := env.Do(t, "GET", "/v1/orgs/"+org+"/invitations", owner.Token, nil).Want(t, 200)
		iid := list.Get("invitations").([]any)[0].(map[string]any)["id"].(string)
		stranger := orgsRegister(t, env)
		// The stranger is an owner elsewhere: a role does not carry across orgs.
		orgsCreate(t, env, stranger, "Elsewhere")
		p := "/v1/orgs/" + org
		var cases []orgsCase
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", p, nil},
			{"PATCH", p, map[string]any{"name": "Hijacked"}},
			{"DELETE", p, nil},
			{"GET", p + "/members", nil},
			{"PATCH", p + "/members/" + member.UserID, map[string]any{"role": "admin"}},
			{"DELETE", p + "/members/" + member.UserID, nil},
			{"DELETE", p + "/members/" + stranger.UserID, nil},
			{"GET", p + "/invitations", nil},
			{"POST", p + "/invitations", map[string]any{"kind": "link"}},
			{"POST", p + "/invitations", map[string]any{"emails": []string{"x@example.com"}}},
			{"DELETE", p + "/invitations/" + iid, nil},
		} {
			cases = append(cases, orgsCase{c.method + " " + c.path, c.method, c.path, c.body, stranger.Token, 404})
		}
		// A key token bound to the member's personal org does not reach the team org.
		keyTok := orgsKeyToken(t, env, member.Token, member.OrgID, "owner")
		cases = append(cases,
			orgsCase{"key bound elsewhere GET", "GET", p, nil, keyTok, 404},
			orgsCase{"key bound elsewhere members", "GET", p + "/members", nil, keyTok, 404},
		)
		runOrgsCases(t, env, cases)
		if r := env.Do(t, "GET", p, owner.Token, nil).Want(t, 200); r.Str("org.name") == "Hijacked" || r.Get("org.member_count") != float64(2) {
			t.Errorf("org after stranger's attempts = %s; want unchanged", r.Body)
		}
	})
}

// TestOrgRoleMatrix checks each role against each managing operation.
func TestOrgRoleMatrix(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		admin := orgsJoin(t, env, owner, org, "admin")
		billing := orgsJoin(t, env, owner, org, "billing")
		member := orgsJoin(t, env, owner, org, "member")
		target := orgsJoin(t, env, owner, org, "member")
		p := "/v1/orgs/" + org
		var cases []orgsCase
		for _, u := range []struct {
			role string
			tok  string
		}{{"billing", billing.Token}, {"member", member.Token}} {
			for _, c := range []struct {
				method, path string
				body         any
			}{
				{"PATCH", p, map[string]any{"name": "Renamed"}},
				{"DELETE", p, nil},
				{"PATCH", p + "/members/" + target.UserID, map[string]any{"role": "admin"}},
				{"DELETE", p + "/members/" + target.UserID, nil},
				{"GET", p + "/invitations", nil},
				{"POST", p + "/invitations", map[string]any{"kind": "link"}},
			} {
				cases = append(cases, orgsCase{u.role + " " + c.method + " " + c.path, c.method, c.path, c.body, u.tok, 403})
			}
			cases = append(cases,
				orgsCase{u.role + " GET org", "GET", p, nil, u.tok, 200},
				orgsCase{u.role + " GET members", "GET", p + "/members", nil, u.tok, 200},
			)
		}
		cases = append(cases,
			orgsCase{"admin renames", "PATCH", p, map[string]any{"name": "Renamed"}, admin.Token, 200},
			orgsCase{"admin lists invitations", "GET", p + "/invitations", nil, admin.Token, 200},
			orgsCase{"admin invites", "POST", p + "/invitations", map[string]any{"kind": "link"}, admin.Token, 200},
			orgsCase{"admin invites an admin", "POST", p + "/invitations", map[string]any{"emails": []string{"adm@example.com"}, "role": "admin"}, admin.Token, 200},
			orgsCase{"admin makes member billing", "PATCH", p + "/members/" + target.UserID, map[string]any{"role": "billing"}, admin.Token, 200},
			orgsCase{"admin makes member admin", "PATCH", p + "/members/" + target.UserID, map[string]any{"role": "admin"}, admin.Token, 200},
			orgsCase{"admin makes member owner", "PATCH", p + "/members/" + target.UserID, map[string]any{"role": "owner"}, admin.Token, 403},
			orgsCase{"admin demotes owner", "PATCH", p + "/members/" + owner.UserID, map[string]any{"role": "admin"}, admin.Token, 403},
			orgsCase{"admin makes self owner", "PATCH", p + "/members/" + admin.UserID, map[string]any{"role": "owner"}, admin.Token, 403},
			orgsCase{"admin removes owner", "DELETE", p + "/members/" + owner.UserID, nil, admin.Token, 403},
			orgsCase{"admin deletes org", "DELETE", p, nil, admin.Token, 403},
			orgsCase{"admin removes member", "DELETE", p + "/members/" + target.UserID, nil, admin.Token, 200},
			orgsCase{"billing leaves", "DELETE", p + "/members/" + billing.UserID, nil, billing.Token, 200},
			orgsCase{"member leaves", "DELETE", p + "/members/" + member.UserID, nil, member.Token, 200},
			orgsCase{"owner makes admin owner", "PATCH", p + "/members/" + admin.UserID, map[string]any{"role": "owner"}, owner.Token, 200},
			orgsCase{"owner demotes other owner", "PATCH", p + "/members/" + admin.UserID, map[string]any{"role": "member"}, owner.Token, 200},
			orgsCase{"owner deletes org", "DELETE", p, nil, owner.Token, 200},
		)
		runOrgsCases(t, env, cases)
	})
}

// TestPersonalOrgTeamOnly checks that team-only operations answer 403 on a
// personal org while the rest work.
func TestPersonalOrgTeamOnly(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		u := orgsRegister(t, env)
		p := "/v1/orgs/" + u.OrgID
		runOrgsCases(t, env, []orgsCase{
			{"GET", "GET", p, nil, u.Token, 200},
			{"members", "GET", p + "/members", nil, u.Token, 200},
			{"invitations list", "GET", p + "/invitations", nil, u.Token, 200},
			{"PATCH", "PATCH", p, map[string]any{"name": "Renamed"}, u.Token, 403},
			{"DELETE", "DELETE", p, nil, u.Token, 403},
			{"role change", "PATCH", p + "/members/" + u.UserID, map[string]any{"role": "admin"}, u.Token, 403},
			{"leave", "DELETE", p + "/members/" + u.UserID, nil, u.Token, 403},
			{"invite by email", "POST", p + "/invitations", map[string]any{"emails": []string{"x@example.com"}}, u.Token, 403},
			{"invite by link", "POST", p + "/invitations", map[string]any{"kind": "link"}, u.Token, 403},
		})
		r := env.Do(t, "GET", p, u.Token, nil).Want(t, 200)
		if r.Str("org.kind") != "personal" || r.Get("org.member_count") != float64(1) || r.Get("org.team_count") != float64(0) {
			t.Errorf("personal org = %s; want kind personal, member_count 1, team_count 0", r.Body)
		}
	})
}
