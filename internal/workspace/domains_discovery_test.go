package workspace_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// orgIDs returns the ids of the orgs GET /v1/me/orgs lists for token, and
// the default one.
func orgIDs(t testing.TB, env *testenv.Env, token string) (ids []string, def string) {
	t.Helper()
	for _, o := range env.Call(t, "GET", "/v1/me/orgs", token, nil).Want(t, 200).List(t, "orgs") {
		id, _ := o["id"].(string)
		ids = append(ids, id)
		if o["is_default"] == true {
			def = id
		}
	}
	return ids, def
}

// TestWsDiscoverable covers "GET /v1/me/discoverable" (spec 4.2 rule 6;
// section 3: discovery withheld at register, re-evaluated at verify-email;
// CONTRACT §3 Domain suggestion).
func TestWsDiscoverable(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		suggest, auto, unverified, unclaimed := testenv.Domain(), testenv.Domain(), testenv.Domain(), testenv.Domain()
		// Users of the auto_join domain sign up before its claim is verified,
		// so auto-join does not make them members.
		autoUser := env.VerifiedAt(t, auto)
		env.VerifiedDomain(t, w.Owner.Access, w.Org, suggest, "suggest")
		env.VerifiedDomain(t, w.Owner.Access, w.Org, auto, "auto_join")
		env.ClaimDomain(t, w.Owner.Access, w.Org, unverified, "suggest")

		verified := env.VerifiedAt(t, suggest)
		pending := env.RegisterAt(t, suggest)
		already := env.VerifiedAt(t, suggest)
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'billing', $3)`, w.Org, already.UserID, env.Clock.Now().UnixMicro())
		claimedOnly := env.VerifiedAt(t, unverified)
		nobody := env.VerifiedAt(t, unclaimed)

		get := func(name, token string, org, domain string) testenv.Case {
			return testenv.Case{Name: name, Method: "GET", Path: "/v1/me/discoverable", Token: token, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					testenv.CheckKeys(t, "answer", r.JSON(), "suggestion")
					testenv.WantSuggestion(t, r, org, domain)
				}}
		}
		env.RunCases(t, []testenv.Case{
			get("verified email at a suggest domain", verified.Access, w.Org, suggest),
			get("unverified email", pending.Access, "", ""),
			get("already a member", already.Access, "", ""),
			get("auto_join domains are never suggested", autoUser.Access, "", ""),
			get("claim not verified", claimedOnly.Access, "", ""),
			get("no claim on the domain", nobody.Access, "", ""),
			get("address at another domain", w.Member.Access, "", ""),
			{Name: "no token", Method: "GET", Path: "/v1/me/discoverable", Want: 401},
		})

		t.Run("re-evaluated at verify-email", func(t *testing.T) {
			env.VerifyEmail(t, pending)
			r := env.Call(t, "GET", "/v1/me/discoverable", pending.Access, nil).Want(t, 200)
			testenv.WantSuggestion(t, r, w.Org, suggest)
			if env.Role(t, w.Org, pending.UserID) != "" {
				t.Errorf("verifying the email of a suggest domain made the user a member; want only a suggestion")
			}
		})

		t.Run("the suggesting org is deleted", func(t *testing.T) {
			gone := env.TeamOrg(t, "Gone", [2]string{w.Stranger.UserID, "owner"})
			d := testenv.Domain()
			env.VerifiedDomain(t, w.Stranger.Access, gone, d, "suggest")
			u := env.VerifiedAt(t, d)
			testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", u.Access, nil).Want(t, 200), gone, d)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
			testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", u.Access, nil).Want(t, 200), "", "")
			env.Call(t, "POST", "/v1/me/discoverable/join", u.Access, nil).Want(t, 404)
		})
	})
}

// TestWsDiscoverableJoin covers "POST /v1/me/discoverable/join" (spec 4.2
// rule 6, section 7: 404 when no org is offered; CONTRACT §4 claims: a key's
// token is bound to its workspace) and "DELETE" of a claim leaving members
// in place (spec 3).
func TestWsDiscoverableJoin(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		suggest, auto := testenv.Domain(), testenv.Domain()
		autoUser := env.VerifiedAt(t, auto)
		claim := env.VerifiedDomain(t, w.Owner.Access, w.Org, suggest, "suggest")
		env.VerifiedDomain(t, w.Owner.Access, w.Org, auto, "auto_join")
		autoMember := env.VerifiedAt(t, auto) // added at verification
		joiner := env.VerifiedAt(t, suggest)
		pending := env.RegisterAt(t, suggest)
		admin := env.VerifiedAt(t, suggest)
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'admin', $3)`, w.Org, admin.UserID, env.Clock.Now().UnixMicro())
		elsewhere := env.VerifiedAt(t, testenv.Domain())
		keyHolder := env.VerifiedAt(t, suggest)
		keyToken := env.KeyToken(t, keyHolder)
		join := "/v1/me/discoverable/join"

		joined := func(a *testenv.Account, role string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				body := r.JSON()
				if tt, ok := body["token_type"]; ok && tt != "Bearer" {
					t.Errorf("token_type = %v; want Bearer when present", tt)
				}
				delete(body, "token_type")
				testenv.CheckKeys(t, "join answer", body, "org", "access_token", "expires_at")
				org := r.Obj(t, "org")
				if org["id"] != w.Org || org["kind"] != "team" || org["role"] != role {
					t.Errorf("org = %v; want the team org %s with role %s", org, w.Org, role)
				}
				if got := testenv.Strings(org["tools"]); !slices.Equal(got, workspace.Tools) {
					t.Errorf("org.tools = %v; want %v", org["tools"], workspace.Tools)
				}
				testenv.Near(t, "expires_at", testenv.Time(t, "expires_at", r.Get("expires_at")), env.Clock.Now().Add(time.Hour))
				c := testenv.Claims(t, r.Str("access_token"))
				if c["sub"] != a.UserID || c["via"] != "password" {
					t.Errorf("claims sub, via = %v, %v; want %s, password (kept from the presented token)", c["sub"], c["via"], a.UserID)
				}
				if id, gotRole, tools := testenv.TokenOrg(t, r.Str("access_token")); id != w.Org || gotRole != role || !slices.Equal(tools, workspace.Tools) {
					t.Errorf("token org claim = {%s %s %v}; want {%s %s all tools}", id, gotRole, tools, w.Org, role)
				}
				if got := env.Role(t, w.Org, a.UserID); got != role {
					t.Errorf("membership role = %q; want %q", got, role)
				}
				// The new token works in the org; the default org moved there.
				env.Call(t, "GET", "/v1/orgs/"+w.Org+"/teams", r.Str("access_token"), nil).Want(t, 200)
				if _, def := orgIDs(t, env, a.Access); def != w.Org {
					t.Errorf("default org = %s; want %s", def, w.Org)
				}
			}
		}
		env.RunCases(t, []testenv.Case{
			{Name: "offered org", Method: "POST", Path: join, Token: joiner.Access, Want: 200, Check: joined(joiner, "member")},
			{Name: "no longer suggested", Method: "GET", Path: "/v1/me/discoverable", Token: joiner.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) { testenv.WantSuggestion(t, r, "", "") }},
			{Name: "again: idempotent", Method: "POST", Path: join, Token: joiner.Access, Want: 200, Check: joined(joiner, "member")},
			{Name: "existing admin keeps the role", Method: "POST", Path: join, Token: admin.Access, Want: 200, Check: joined(admin, "admin")},
			{Name: "refresh lands in the joined org", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": joiner.Refresh}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					if r.Str("org.id") != w.Org || r.Str("org.role") != "member" {
						t.Errorf("refreshed org = %v; want %s as member", r.Get("org"), w.Org)
					}
				}},
			{Name: "no offer: auto_join domain only", Method: "POST", Path: join, Token: autoUser.Access, Want: 404},
			{Name: "auto_join member: idempotent", Method: "POST", Path: join, Token: autoMember.Access, Want: 200, Check: joined(autoMember, "member")},
			{Name: "no offer: address at another domain", Method: "POST", Path: join, Token: elsewhere.Access, Want: 404},
			{Name: "API-key token cannot leave its workspace", Method: "POST", Path: join, Token: keyToken, Want: 403},
			{Name: "no token", Method: "POST", Path: join, Want: 401},
		})

		t.Run("unverified email is not offered", func(t *testing.T) {
			r := env.Call(t, "POST", join, pending.Access, nil)
			if r.Status != 403 && r.Status != 404 {
				t.Errorf("status = %d, body %s; want 403 or 404", r.Status, r.Body)
			}
			if got := env.Role(t, w.Org, pending.UserID); got != "" {
				t.Errorf("unverified user joined as %q; want not a member", got)
			}
		})
		t.Run("refused joins added nobody", func(t *testing.T) {
			for _, a := range []*testenv.Account{autoUser, elsewhere, keyHolder} {
				if got := env.Role(t, w.Org, a.UserID); got != "" {
					t.Errorf("user %s is %q in the org; want not a member", a.Email, got)
				}
			}
		})

		t.Run("removing the claim keeps members, stops discovery", func(t *testing.T) {
			env.Call(t, "DELETE", "/v1/orgs/"+w.Org+"/domains/"+claim, w.Owner.Access, nil).Want(t, 200)
			if got := env.Role(t, w.Org, joiner.UserID); got != "member" {
				t.Errorf("joiner's role after the claim was removed = %q; want member", got)
			}
			late := env.VerifiedAt(t, suggest)
			testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", late.Access, nil).Want(t, 200), "", "")
			env.Call(t, "POST", join, late.Access, nil).Want(t, 404)
			// Members of the org stay too for an already-joined caller.
			if got := env.Role(t, w.Org, admin.UserID); got != "admin" {
				t.Errorf("admin's role = %q; want admin", got)
			}
		})
	})
}

// TestWsAutoJoin covers domain auto-join (spec 3 Account rows: withheld at
// register, re-evaluated at verify-email; 4.2 rule 6: members are added at
// signup; magic links sign an address up with its email proven).
func TestWsAutoJoin(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		auto := testenv.Domain()
		claim := env.VerifiedDomain(t, w.Owner.Access, w.Org, auto, "auto_join")

		t.Run("register withholds, verify-email joins", func(t *testing.T) {
			a := env.RegisterAt(t, auto)
			if got := env.Role(t, w.Org, a.UserID); got != "" {
				t.Fatalf("registered user is %q in the org before verifying; want not a member", got)
			}
			if ids, _ := orgIDs(t, env, a.Access); slices.Contains(ids, w.Org) {
				t.Errorf("GET /v1/me/orgs lists the org before verification: %v", ids)
			}
			env.VerifyEmail(t, a)
			if got := env.Role(t, w.Org, a.UserID); got != "member" {
				t.Fatalf("role after verify-email = %q; want member", got)
			}
			if ids, _ := orgIDs(t, env, a.Access); !slices.Contains(ids, w.Org) {
				t.Errorf("GET /v1/me/orgs = %v; want it to list the org %s", ids, w.Org)
			}
			testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", a.Access, nil).Want(t, 200), "", "")
			// The new member can switch into the org.
			r := env.Call(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": w.Org}).Want(t, 200)
			if r.Str("org.role") != "member" {
				t.Errorf("switch-org role = %v; want member", r.Get("org.role"))
			}
		})

		t.Run("magic-link sign-up joins at once", func(t *testing.T) {
			email := "x-" + testenv.RandomHex(5) + "@" + auto
			r := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, email)}).Want(t, 200)
			if r.Get("user.email_verified") != true {
				t.Errorf("user.email_verified = %v; want true", r.Get("user.email_verified"))
			}
			if got := env.Role(t, w.Org, r.Str("user.id")); got != "member" {
				t.Errorf("role after magic-link sign-up = %q; want member", got)
			}
		})

		t.Run("magic link of an unverified account joins", func(t *testing.T) {
			a := env.RegisterAt(t, auto)
			env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, a.Email)}).Want(t, 200)
			if got := env.Role(t, w.Org, a.UserID); got != "member" {
				t.Errorf("role after the magic link proved the address = %q; want member", got)
			}
		})

		t.Run("mixed-case address", func(t *testing.T) {
			a := &testenv.Account{Email: "Mixed-" + testenv.RandomHex(4) + "@" + strings.ToUpper(auto), Password: "password-1234"}
			r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			a.UserID, a.Email = r.Str("user.id"), r.Str("user.email")
			env.VerifyEmail(t, a)
			if got := env.Role(t, w.Org, a.UserID); got != "member" {
				t.Errorf("role = %q; want member", got)
			}
		})

		t.Run("suggest mode does not auto-join", func(t *testing.T) {
			d := testenv.Domain()
			env.VerifiedDomain(t, w.Owner.Access, w.Org, d, "suggest")
			a := env.VerifiedAt(t, d)
			if got := env.Role(t, w.Org, a.UserID); got != "" {
				t.Errorf("role = %q; want not a member (suggest mode only suggests)", got)
			}
		})

		t.Run("unverified claim does not auto-join", func(t *testing.T) {
			d := testenv.Domain()
			env.ClaimDomain(t, w.Owner.Access, w.Org, d, "auto_join")
			a := env.VerifiedAt(t, d)
			if got := env.Role(t, w.Org, a.UserID); got != "" {
				t.Errorf("role = %q; want not a member", got)
			}
		})

		t.Run("removing the claim keeps auto-joined members", func(t *testing.T) {
			a := env.VerifiedAt(t, auto)
			env.Call(t, "DELETE", "/v1/orgs/"+w.Org+"/domains/"+claim, w.Owner.Access, nil).Want(t, 200)
			if got := env.Role(t, w.Org, a.UserID); got != "member" {
				t.Errorf("role after the claim was removed = %q; want member", got)
			}
			b := env.VerifiedAt(t, auto)
			if got := env.Role(t, w.Org, b.UserID); got != "" {
				t.Errorf("a user verified after the claim was removed is %q; want not a member", got)
			}
		})
	})
}
