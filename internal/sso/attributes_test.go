package sso_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// team creates a team of org named name as token and returns its id.
func team(t *testing.T, env *testenv.Env, token, org, name string) string {
	t.Helper()
	return env.Call(t, "POST", "/v1/orgs/"+org+"/teams", token, map[string]any{"name": name}).Want(t, 200).Str("team.id")
}

// teamsOf are the teams of org userID is on, read from the database.
func teamsOf(t *testing.T, env *testenv.Env, userID string) []string {
	t.Helper()
	rows, err := env.Store.DB().Query(`SELECT team_id FROM team_members WHERE user_id = $1 ORDER BY team_id`, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

// userName and orgRole read a user's name and their role in org.
func userName(t *testing.T, env *testenv.Env, id string) string {
	t.Helper()
	var n string
	env.Store.DB().QueryRow(`SELECT name FROM users WHERE id = $1`, id).Scan(&n)
	return n
}

func orgRole(t *testing.T, env *testenv.Env, org, id string) string {
	t.Helper()
	var r string
	env.Store.DB().QueryRow(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2`, org, id).Scan(&r)
	return r
}

// TestAttributeMappingOIDC: a connection's mapping names the name and
// groups claims and maps groups to teams; a team of another workspace is
// refused at configuration. At each sign-in the name follows the claim and
// the person is added to the mapped teams of their groups and removed
// from the other mapped teams, an unmapped team untouched; a group named
// like a role ("owner", "admin"), even mapped with a role field, gives no
// role. Each change is audited.
func TestAttributeMappingOIDC(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		eng, ops, manual := team(t, env, f.owner.Token, f.org, "Engineering"), team(t, env, f.owner.Token, f.org, "Operations"), team(t, env, f.owner.Token, f.org, "Manual")
		otherOwner, otherOrg := env.Team(t)
		foreign := team(t, env, otherOwner.Token, otherOrg, "Elsewhere")
		path := "/v1/orgs/" + f.org + "/sso/" + f.conn
		for name, m := range map[string]map[string]any{
			"another workspace's team": {"groups": "groups", "group_teams": []map[string]any{{"group": "eng", "team_id": foreign}}},
			"no such team":             {"groups": "groups", "group_teams": []map[string]any{{"group": "eng", "team_id": "not-a-team"}}},
			"no groups claim":          {"group_teams": []map[string]any{{"group": "eng", "team_id": eng}}},
			"empty group":              {"groups": "groups", "group_teams": []map[string]any{{"group": " ", "team_id": eng}}},
			"two-line name claim":      {"name": "a\nb"},
		} {
			t.Run(name, func(t *testing.T) {
				r := env.Call(t, "PATCH", path, f.owner.Token, map[string]any{"attribute_mapping": m}).Want(t, 400)
				if tid, _ := m["group_teams"].([]map[string]any); len(tid) > 0 && tid[0]["group"] == "eng" && m["groups"] != nil &&
					!strings.Contains(r.Str("error"), "is not a team of this workspace") {
					t.Errorf("refusal %s; want the team named as not this workspace's", r.Body)
				}
			})
		}
		r := env.Call(t, "PATCH", path, f.owner.Token, map[string]any{"attribute_mapping": map[string]any{"name": "display_name", "groups": "groups",
			"group_teams": []map[string]any{{"group": "eng", "team_id": eng}, {"group": "ops", "team_id": ops},
				{"group": "owner", "team_id": eng, "role": "owner"}}}}).Want(t, 200)
		if got, _ := r.Get("connection.attribute_mapping.group_teams").([]any); len(got) != 3 {
			t.Fatalf("group_teams = %v; want 3", got)
		}
		if r.Str("connection.attribute_mapping.groups") != "groups" {
			t.Fatalf("mapping = %s", r.Body)
		}

		email, sub := "g-"+testenv.RandomHex(3)+"@"+f.domain, "sub-"+testenv.RandomHex(4)
		resp, _ := f.signIn(t, map[string]any{"sub": sub, "email": email, "email_verified": true, "name": "ignored",
			"display_name": "Dana Mapped", "groups": []any{"eng", "owner", "admin"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("first sign-in answered %d", resp.StatusCode)
		}
		id := userByEmail(t, env, email)
		if got := userName(t, env, id); got != "Dana Mapped" {
			t.Errorf("name = %q; want the display_name claim", got)
		}
		if got := teamsOf(t, env, id); !slices.Equal(got, []string{eng}) {
			t.Errorf("teams = %v; want only engineering %s", got, eng)
		}
		if got := orgRole(t, env, f.org, id); got != "member" {
			t.Errorf("role = %q; want member (groups grant no role)", got)
		}
		env.Call(t, "POST", "/v1/orgs/"+f.org+"/teams/"+manual+"/members", f.owner.Token, map[string]any{"user_id": id}).Want(t, 200)

		resp, _ = f.signIn(t, map[string]any{"sub": sub, "email": email, "email_verified": true, "display_name": "Dana Renamed", "groups": []any{"ops"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("second sign-in answered %d", resp.StatusCode)
		}
		want := []string{ops, manual}
		slices.Sort(want)
		if got := teamsOf(t, env, id); !slices.Equal(got, want) {
			t.Errorf("teams after the groups changed = %v; want operations and the unmapped team %v", got, want)
		}
		if got := userName(t, env, id); got != "Dana Renamed" {
			t.Errorf("name = %q; want it updated at sign-in", got)
		}
		if got := orgRole(t, env, f.org, id); got != "member" {
			t.Errorf("role = %q; want member", got)
		}
		if n := len(auditActions(t, env, f.owner.Token, f.org, "identity.sso.attributes_applied")); n != 2 {
			t.Errorf("attributes_applied entries = %d; want 2", n)
		}
	})
}

// TestAttributeMappingSAML: a SAML connection's mapping reads the name and
// the groups from attributes (multi-valued), as OpenID Connect's does from
// claims.
func TestAttributeMappingSAML(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		eng, ops := team(t, env, f.owner.Token, f.org, "Engineering"), team(t, env, f.owner.Token, f.org, "Operations")
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"attribute_mapping": map[string]any{
			"name": "fullName", "groups": "memberOf", "group_teams": []map[string]any{{"group": "eng", "team_id": eng}, {"group": "ops", "team_id": ops}}}}).Want(t, 200)
		email := "s-" + testenv.RandomHex(3) + "@" + f.domain
		attrs := func(name string, groups ...string) func(*assertion) {
			return func(a *assertion) {
				a.attributes = `<saml:Attribute Name="fullName"><saml:AttributeValue>` + name + `</saml:AttributeValue></saml:Attribute><saml:Attribute Name="memberOf">`
				for _, g := range groups {
					a.attributes += `<saml:AttributeValue>` + g + `</saml:AttributeValue>`
				}
				a.attributes += `</saml:Attribute>`
			}
		}
		if resp, _ := f.signIn(t, email, attrs("Sam Saml", "eng", "ops", "owner")); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in answered %d", resp.StatusCode)
		}
		id := userByEmail(t, env, email)
		want := []string{eng, ops}
		slices.Sort(want)
		if got := teamsOf(t, env, id); !slices.Equal(got, want) || userName(t, env, id) != "Sam Saml" {
			t.Errorf("teams %v, name %q; want %v and Sam Saml", got, userName(t, env, id), want)
		}
		if resp, _ := f.signIn(t, email, attrs("Sam Second", "ops")); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("second sign-in answered %d", resp.StatusCode)
		}
		if got := teamsOf(t, env, id); !slices.Equal(got, []string{ops}) || userName(t, env, id) != "Sam Second" || orgRole(t, env, f.org, id) != "member" {
			t.Errorf("teams %v, name %q, role %q; want [%s], Sam Second, member", got, userName(t, env, id), orgRole(t, env, f.org, id), ops)
		}
	})
}
