package identity_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestRequireMFA: an owner at aal2 makes a team org require two-factor
// (audited as org.updated, shown in the org); a member without a factor
// then gets 403 naming the fix on the org's routes and tool APIs, still
// reaches their own account and can enrol; with a factor they get in. An
// owner below aal2 cannot turn it on; a personal org has no such setting.
func TestRequireMFA(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		preFactor := m.Account.Access // minted before the factor: aal1, owes nothing
		m.Account.Token = m.Access
		team := env.CreateOrg(t, m.Account, "Strict team")
		owner := m.Account.Token // scoped to the team, aal2
		member := env.Join(t, m.Account, team, "member")
		admin := env.Join(t, m.Account, team, "admin")
		orgPath := "/v1/orgs/" + team
		on := map[string]any{"require_mfa": true}
		policy := testenv.ErrorNames("requires two-factor", "/v1/me/factors")
		env.RunCases(t, []testenv.Case{
			{Name: "off by default", Method: "GET", Path: orgPath, Token: member.Token, Want: 200, Check: wantRequire(false)},
			{Name: "owner below aal2", Method: "PATCH", Path: orgPath, Token: preFactor, Body: on, Want: 403, Check: testenv.ErrorNames("set up two-factor")},
			{Name: "admin without a factor", Method: "PATCH", Path: orgPath, Token: admin.Token, Body: on, Want: 403},
			{Name: "member", Method: "PATCH", Path: orgPath, Token: member.Token, Body: on, Want: 403},
			{Name: "not a boolean", Method: "PATCH", Path: orgPath, Token: owner, Body: map[string]any{"require_mfa": "yes"}, Want: 400},
			{Name: "personal org", Method: "PATCH", Path: "/v1/orgs/" + member.OrgID, Token: member.Access, Body: on, Want: 403},
			{Name: "owner at aal2 turns it on", Method: "PATCH", Path: orgPath, Token: owner, Body: on, Want: 200, Check: wantRequire(true)},
			{Name: "again is no change", Method: "PATCH", Path: orgPath, Token: owner, Body: on, Want: 400},
		})
		var cases []testenv.Case
		for _, rt := range [][2]string{{"GET", orgPath}, {"GET", orgPath + "/members"}, {"GET", orgPath + "/teams"}, {"PATCH", orgPath},
			{"GET", "/tasks/v1/issues"}, {"GET", "/links/v1/links"}, {"GET", "/notes/v1/notes"}} {
			cases = append(cases, testenv.Case{Name: "member " + rt[0] + " " + rt[1], Method: rt[0], Path: rt[1], Token: member.Token, Body: map[string]any{}, Want: 403, Check: policy})
		}
		cases = append(cases,
			testenv.Case{Name: "admin settings", Method: "PATCH", Path: orgPath, Token: admin.Token, Body: map[string]any{"require_mfa": false}, Want: 403, Check: policy},
			testenv.Case{Name: "member's own account", Method: "GET", Path: "/v1/auth/me", Token: member.Token, Want: 200},
			testenv.Case{Name: "member's personal org", Method: "GET", Path: "/v1/orgs/" + member.OrgID, Token: member.Token, Want: 200},
			testenv.Case{Name: "owner at aal2", Method: "GET", Path: orgPath, Token: owner, Want: 200, Check: wantRequire(true)},
			testenv.Case{Name: "owner's tool API", Method: "GET", Path: "/tasks/v1/issues", Token: owner, Want: 200},
		)
		env.RunCases(t, cases)
		// The member enrols (with the token the policy refuses) and gets in.
		e := env.Call(t, "POST", "/v1/me/factors/totp", member.Token, nil).Want(t, 201)
		c := env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", member.Token,
			map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}).Want(t, 200)
		env.Call(t, "GET", orgPath+"/members", c.Str("access_token"), nil).Want(t, 200)
		env.Call(t, "GET", "/tasks/v1/issues", c.Str("access_token"), nil).Want(t, 200)
		entries := env.Audit(t, owner, team, "action=identity.org.updated")
		if len(entries) == 0 {
			t.Fatalf("no org.updated entry for require_mfa")
		}
		env.Call(t, "PATCH", orgPath, owner, map[string]any{"require_mfa": false}).Want(t, 200)
		env.Call(t, "GET", orgPath, admin.Token, nil).Want(t, 200)
	})
}

func wantRequire(want bool) func(t *testing.T, r *testenv.Resp) {
	return func(t *testing.T, r *testenv.Resp) {
		if r.Get("org.require_mfa") != want {
			t.Errorf("org.require_mfa = %v; want %v", r.Get("org.require_mfa"), want)
		}
	}
}
