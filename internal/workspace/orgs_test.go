package workspace_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestCreateOrg covers POST /v1/orgs (spec 4.3 rule 1).
func TestCreateOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		u := env.Register(t)
		env.RunCases(t, []testenv.Case{
			{Name: "no token", Method: "POST", Path: "/v1/orgs", Body: map[string]string{"name": "Acme"}, Want: 401},
			{Name: "bad token", Method: "POST", Path: "/v1/orgs", Body: map[string]string{"name": "Acme"}, Token: "nope", Want: 401},
			{Name: "name missing", Method: "POST", Path: "/v1/orgs", Body: map[string]string{}, Token: u.Token, Want: 400},
			{Name: "empty body", Method: "POST", Path: "/v1/orgs", Token: u.Token, Want: 400},
			{Name: "name one character", Method: "POST", Path: "/v1/orgs", Body: map[string]string{"name": "a"}, Token: u.Token, Want: 400},
			{Name: "name one character after trim", Method: "POST", Path: "/v1/orgs", Body: map[string]string{"name": "  a  "}, Token: u.Token, Want: 400},
			{Name: "name not a string", Method: "POST", Path: "/v1/orgs", Body: map[string]any{"name": 12}, Token: u.Token, Want: 400},
			{Name: "not JSON", Method: "POST", Path: "/v1/orgs", Body: "{", Token: u.Token, Want: 400},
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
			c := testenv.Claims(t, r.Str("access_token"))
			oc, _ := c["org"].(map[string]any)
			if oc["id"] != id || oc["role"] != "owner" {
				t.Errorf("token org claim = %v; want id %s role owner", oc, id)
			}
			before := testenv.Claims(t, u.Access)
			if c["via"] != before["via"] || c["sid"] != before["sid"] || c["sid"] == nil {
				t.Errorf("token via, sid = %v, %v; want the caller's %v, %v", c["via"], c["sid"], before["via"], before["sid"])
			}
			roles := env.MemberRoles(t, r.Str("access_token"), id)
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
			tok := env.ForgeKeyToken(t, u.Token, u.OrgID, "owner")
			env.Do(t, "POST", "/v1/orgs", tok, map[string]string{"name": "Keyed"}).Want(t, 403)
		})
	})
}

// TestGetOrg covers GET /v1/orgs/{id}: the profile with its counts.
func TestGetOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		stranger := env.Register(t)
		env.RunCases(t, []testenv.Case{
			{Name: "owner", Method: "GET", Path: "/v1/orgs/" + org, Token: owner.Token, Want: 200},
			{Name: "member with a token of another org", Method: "GET", Path: "/v1/orgs/" + org, Token: member.Access, Want: 200},
			{Name: "stranger", Method: "GET", Path: "/v1/orgs/" + org, Token: stranger.Token, Want: 404},
			{Name: "unknown id", Method: "GET", Path: "/v1/orgs/00000000-0000-4000-8000-000000000000", Token: owner.Token, Want: 404},
			{Name: "not an id", Method: "GET", Path: "/v1/orgs/acme", Token: owner.Token, Want: 404},
			{Name: "no token", Method: "GET", Path: "/v1/orgs/" + org, Want: 401},
			{Name: "personal org", Method: "GET", Path: "/v1/orgs/" + stranger.OrgID, Token: stranger.Token, Want: 200},
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
		owner, org := env.Team(t)
		other := env.Register(t)
		taken, fresh := "taken-"+testenv.RandomHex(4), "fresh-"+testenv.RandomHex(4)
		env.CreateOrg(t, other, taken)
		cur := env.Do(t, "GET", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
		name, slug := cur.Str("org.name"), cur.Str("org.slug")
		p := "/v1/orgs/" + org
		env.RunCases(t, []testenv.Case{
			{Name: "empty body", Method: "PATCH", Path: p, Token: owner.Token, Want: 400},
			{Name: "empty object", Method: "PATCH", Path: p, Body: map[string]any{}, Token: owner.Token, Want: 400},
			{Name: "all null", Method: "PATCH", Path: p, Body: map[string]any{"name": nil, "slug": nil, "avatar_url": nil}, Token: owner.Token, Want: 400},
			{Name: "same name", Method: "PATCH", Path: p, Body: map[string]any{"name": name}, Token: owner.Token, Want: 400},
			{Name: "same name padded", Method: "PATCH", Path: p, Body: map[string]any{"name": " " + name + " "}, Token: owner.Token, Want: 400},
			{Name: "same slug", Method: "PATCH", Path: p, Body: map[string]any{"slug": slug}, Token: owner.Token, Want: 400},
			{Name: "same avatar", Method: "PATCH", Path: p, Body: map[string]any{"avatar_url": ""}, Token: owner.Token, Want: 400},
			{Name: "name too short", Method: "PATCH", Path: p, Body: map[string]any{"name": "x"}, Token: owner.Token, Want: 400},
			{Name: "slug with capitals", Method: "PATCH", Path: p, Body: map[string]any{"slug": "Acme"}, Token: owner.Token, Want: 400},
			{Name: "slug with space", Method: "PATCH", Path: p, Body: map[string]any{"slug": "ac me"}, Token: owner.Token, Want: 400},
			{Name: "slug one character", Method: "PATCH", Path: p, Body: map[string]any{"slug": "a"}, Token: owner.Token, Want: 400},
			{Name: "slug leading hyphen", Method: "PATCH", Path: p, Body: map[string]any{"slug": "-acme"}, Token: owner.Token, Want: 400},
			{Name: "slug 41 characters", Method: "PATCH", Path: p, Body: map[string]any{"slug": "a2345678901234567890123456789012345678901"}, Token: owner.Token, Want: 400},
			{Name: "avatar not http", Method: "PATCH", Path: p, Body: map[string]any{"avatar_url": "javascript:alert(1)"}, Token: owner.Token, Want: 400},
			{Name: "slug taken", Method: "PATCH", Path: p, Body: map[string]any{"slug": taken}, Token: owner.Token, Want: 409},
			{Name: "name not a string", Method: "PATCH", Path: p, Body: map[string]any{"name": 5}, Token: owner.Token, Want: 400},
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
		env.CreateOrg(t, other, slug)
		r = env.Do(t, "PATCH", "/v1/orgs/"+other.OrgID, other.Access, map[string]any{"name": "Mine"})
		if r.Status != 403 {
			t.Errorf("PATCH personal org: status = %d; want 403", r.Status)
		}
	})
}

// TestDeleteOrg covers DELETE /v1/orgs/{id} and what a deleted org leaves.
func TestDeleteOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		admin := env.Join(t, owner, org, "admin")
		member := env.Join(t, owner, org, "member")
		pending := env.Invite(t, owner.Token, org, "later@example.com", "member")
		link := env.InviteByLink(t, owner.Token, org)
		p := "/v1/orgs/" + org
		env.RunCases(t, []testenv.Case{
			{Name: "no token", Method: "DELETE", Path: p, Want: 401},
			{Name: "key token", Method: "DELETE", Path: p, Token: env.ForgeKeyToken(t, owner.Token, org, "owner"), Want: 403},
			{Name: "admin", Method: "DELETE", Path: p, Token: admin.Token, Want: 403},
			{Name: "member", Method: "DELETE", Path: p, Token: member.Token, Want: 403},
			{Name: "personal org", Method: "DELETE", Path: "/v1/orgs/" + owner.OrgID, Token: owner.Token, Want: 403},
			{Name: "unknown", Method: "DELETE", Path: "/v1/orgs/00000000-0000-4000-8000-000000000000", Token: owner.Token, Want: 404},
			{Name: "owner", Method: "DELETE", Path: p, Token: owner.Token, Want: 200},
			// Tokens scoped to the deleted org are revoked with it (issue 13
			// item 7): 401; the members' other tokens find it gone: 404.
			{Name: "again", Method: "DELETE", Path: p, Token: owner.Access, Want: 404},
			{Name: "again with its token", Method: "DELETE", Path: p, Token: owner.Token, Want: 401},
			{Name: "GET by owner", Method: "GET", Path: p, Token: owner.Access, Want: 404},
			{Name: "GET by member", Method: "GET", Path: p, Token: member.Access, Want: 404},
			{Name: "GET by member with its token", Method: "GET", Path: p, Token: member.Token, Want: 401},
			{Name: "members", Method: "GET", Path: p + "/members", Token: admin.Access, Want: 404},
			{Name: "PATCH", Method: "PATCH", Path: p, Body: map[string]any{"name": "Zombie"}, Token: owner.Access, Want: 404},
			{Name: "invitations", Method: "GET", Path: p + "/invitations", Token: owner.Access, Want: 404},
			{Name: "preview email invitation", Method: "GET", Path: "/v1/invitations/" + pending, Want: 410},
			{Name: "preview link invitation", Method: "GET", Path: "/v1/invitations/" + link, Want: 410},
			{Name: "accept link invitation", Method: "POST", Path: "/v1/invitations/" + link + "/accept", Token: env.Register(t).Token, Want: 410},
			{Name: "switch-org", Method: "POST", Path: "/v1/auth/switch-org", Body: map[string]string{"org_id": org}, Token: member.Access, Want: 403},
			{Name: "me with a token scoped to it", Method: "GET", Path: "/v1/auth/me", Token: member.Token, Want: 401},
		})
		// Users whose default it was fall back to their personal org.
		for _, u := range []*testenv.Account{owner, admin, member} {
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
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"kind": "link"}).Want(t, 200)
		list := env.Do(t, "GET", "/v1/orgs/"+org+"/invitations", owner.Token, nil).Want(t, 200)
		iid := list.Get("invitations").([]any)[0].(map[string]any)["id"].(string)
		stranger := env.Register(t)
		// The stranger is an owner elsewhere: a role does not carry across orgs.
		env.CreateOrg(t, stranger, "Elsewhere")
		p := "/v1/orgs/" + org
		var cases []testenv.Case
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
			cases = append(cases, testenv.Case{Name: c.method + " " + c.path, Method: c.method, Path: c.path, Body: c.body, Token: stranger.Token, Want: 404})
		}
		// A key token bound to the member's personal org does not reach the team org.
		keyTok := env.ForgeKeyToken(t, member.Token, member.OrgID, "owner")
		cases = append(cases,
			testenv.Case{Name: "key bound elsewhere GET", Method: "GET", Path: p, Token: keyTok, Want: 404},
			testenv.Case{Name: "key bound elsewhere members", Method: "GET", Path: p + "/members", Token: keyTok, Want: 404},
		)
		env.RunCases(t, cases)
		if r := env.Do(t, "GET", p, owner.Token, nil).Want(t, 200); r.Str("org.name") == "Hijacked" || r.Get("org.member_count") != float64(2) {
			t.Errorf("org after stranger's attempts = %s; want unchanged", r.Body)
		}
	})
}

// TestOrgRoleMatrix checks each role against each managing operation.
func TestOrgRoleMatrix(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		admin := env.Join(t, owner, org, "admin")
		billing := env.Join(t, owner, org, "billing")
		member := env.Join(t, owner, org, "member")
		target := env.Join(t, owner, org, "member")
		p := "/v1/orgs/" + org
		var cases []testenv.Case
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
				cases = append(cases, testenv.Case{Name: u.role + " " + c.method + " " + c.path, Method: c.method, Path: c.path, Body: c.body, Token: u.tok, Want: 403})
			}
			cases = append(cases,
				testenv.Case{Name: u.role + " GET org", Method: "GET", Path: p, Token: u.tok, Want: 200},
				testenv.Case{Name: u.role + " GET members", Method: "GET", Path: p + "/members", Token: u.tok, Want: 200},
			)
		}
		cases = append(cases,
			testenv.Case{Name: "admin renames", Method: "PATCH", Path: p, Body: map[string]any{"name": "Renamed"}, Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin lists invitations", Method: "GET", Path: p + "/invitations", Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin invites", Method: "POST", Path: p + "/invitations", Body: map[string]any{"kind": "link"}, Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin invites an admin", Method: "POST", Path: p + "/invitations", Body: map[string]any{"emails": []string{"adm@example.com"}, "role": "admin"}, Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin makes member billing", Method: "PATCH", Path: p + "/members/" + target.UserID, Body: map[string]any{"role": "billing"}, Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin makes member admin", Method: "PATCH", Path: p + "/members/" + target.UserID, Body: map[string]any{"role": "admin"}, Token: admin.Token, Want: 200},
			testenv.Case{Name: "admin makes member owner", Method: "PATCH", Path: p + "/members/" + target.UserID, Body: map[string]any{"role": "owner"}, Token: admin.Token, Want: 403},
			testenv.Case{Name: "admin demotes owner", Method: "PATCH", Path: p + "/members/" + owner.UserID, Body: map[string]any{"role": "admin"}, Token: admin.Token, Want: 403},
			testenv.Case{Name: "admin makes self owner", Method: "PATCH", Path: p + "/members/" + admin.UserID, Body: map[string]any{"role": "owner"}, Token: admin.Token, Want: 403},
			testenv.Case{Name: "admin removes owner", Method: "DELETE", Path: p + "/members/" + owner.UserID, Token: admin.Token, Want: 403},
			testenv.Case{Name: "admin deletes org", Method: "DELETE", Path: p, Token: admin.Token, Want: 403},
			testenv.Case{Name: "admin removes member", Method: "DELETE", Path: p + "/members/" + target.UserID, Token: admin.Token, Want: 200},
			testenv.Case{Name: "billing leaves", Method: "DELETE", Path: p + "/members/" + billing.UserID, Token: billing.Token, Want: 200},
			testenv.Case{Name: "member leaves", Method: "DELETE", Path: p + "/members/" + member.UserID, Token: member.Token, Want: 200},
			testenv.Case{Name: "owner makes admin owner", Method: "PATCH", Path: p + "/members/" + admin.UserID, Body: map[string]any{"role": "owner"}, Token: owner.Token, Want: 200},
			testenv.Case{Name: "owner demotes other owner", Method: "PATCH", Path: p + "/members/" + admin.UserID, Body: map[string]any{"role": "member"}, Token: owner.Token, Want: 200},
			testenv.Case{Name: "owner deletes org", Method: "DELETE", Path: p, Token: owner.Token, Want: 200},
		)
		env.RunCases(t, cases)
	})
}

// TestPersonalOrgTeamOnly checks that team-only operations answer 403 on a
// personal org while the rest work.
func TestPersonalOrgTeamOnly(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		u := env.Register(t)
		p := "/v1/orgs/" + u.OrgID
		env.RunCases(t, []testenv.Case{
			{Name: "GET", Method: "GET", Path: p, Token: u.Token, Want: 200},
			{Name: "members", Method: "GET", Path: p + "/members", Token: u.Token, Want: 200},
			{Name: "invitations list", Method: "GET", Path: p + "/invitations", Token: u.Token, Want: 200},
			{Name: "PATCH", Method: "PATCH", Path: p, Body: map[string]any{"name": "Renamed"}, Token: u.Token, Want: 403},
			{Name: "DELETE", Method: "DELETE", Path: p, Token: u.Token, Want: 403},
			{Name: "role change", Method: "PATCH", Path: p + "/members/" + u.UserID, Body: map[string]any{"role": "admin"}, Token: u.Token, Want: 403},
			{Name: "leave", Method: "DELETE", Path: p + "/members/" + u.UserID, Token: u.Token, Want: 403},
			{Name: "invite by email", Method: "POST", Path: p + "/invitations", Body: map[string]any{"emails": []string{"x@example.com"}}, Token: u.Token, Want: 403},
			{Name: "invite by link", Method: "POST", Path: p + "/invitations", Body: map[string]any{"kind": "link"}, Token: u.Token, Want: 403},
		})
		r := env.Do(t, "GET", p, u.Token, nil).Want(t, 200)
		if r.Str("org.kind") != "personal" || r.Get("org.member_count") != float64(1) || r.Get("org.team_count") != float64(0) {
			t.Errorf("personal org = %s; want kind personal, member_count 1, team_count 0", r.Body)
		}
	})
}
