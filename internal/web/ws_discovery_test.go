package web_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wsOrgIDs returns the ids of the orgs GET /v1/me/orgs lists for token, and
// the default one.
func wsOrgIDs(t testing.TB, env *testenv.Env, token string) (ids []string, def string) {
	t.Helper()
	for _, o := range meList(t, wsDo(t, env, "GET", "/v1/me/orgs", token, nil).Want(t, 200), "orgs") {
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
		w := wsNewWorld(t, env)
		suggest, auto, unverified, unclaimed := wsDomain(), wsDomain(), wsDomain(), wsDomain()
		// Users of the auto_join domain sign up before its claim is verified,
		// so auto-join does not make them members.
		autoUser := wsVerifiedAt(t, env, auto)
		wsVerifiedDomain(t, env, w.owner.Access, w.org, suggest, "suggest")
		wsVerifiedDomain(t, env, w.owner.Access, w.org, auto, "auto_join")
		wsClaim(t, env, w.owner.Access, w.org, unverified, "suggest")

		verified := wsVerifiedAt(t, env, suggest)
		pending := wsRegisterAt(t, env, suggest)
		already := wsVerifiedAt(t, env, suggest)
		meExec(t, env, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'billing', $3)`, w.org, already.UserID, env.Clock.Now().UnixMicro())
		claimedOnly := wsVerifiedAt(t, env, unverified)
		nobody := wsVerifiedAt(t, env, unclaimed)

		get := func(name, token string, org, domain string) wsCase {
			return wsCase{name: name, method: "GET", path: "/v1/me/discoverable", token: token, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					wsCheckKeys(t, "answer", r.JSON(), "suggestion")
					wsWantSuggestion(t, r, org, domain)
				}}
		}
		wsRun(t, env, []wsCase{
			get("verified email at a suggest domain", verified.Access, w.org, suggest),
			get("unverified email", pending.Access, "", ""),
			get("already a member", already.Access, "", ""),
			get("auto_join domains are never suggested", autoUser.Access, "", ""),
			get("claim not verified", claimedOnly.Access, "", ""),
			get("no claim on the domain", nobody.Access, "", ""),
			get("address at another domain", w.member.Access, "", ""),
			{name: "no token", method: "GET", path: "/v1/me/discoverable", wantStatus: 401},
		})

		t.Run("re-evaluated at verify-email", func(t *testing.T) {
			wsVerifyEmail(t, env, pending)
			r := wsDo(t, env, "GET", "/v1/me/discoverable", pending.Access, nil).Want(t, 200)
			wsWantSuggestion(t, r, w.org, suggest)
			if wsRole(t, env, w.org, pending.UserID) != "" {
				t.Errorf("verifying the email of a suggest domain made the user a member; want only a suggestion")
			}
		})

		t.Run("the suggesting org is deleted", func(t *testing.T) {
			gone := meTeamOrg(t, env, "Gone", [2]string{w.stranger.UserID, "owner"})
			d := wsDomain()
			wsVerifiedDomain(t, env, w.stranger.Access, gone, d, "suggest")
			u := wsVerifiedAt(t, env, d)
			wsWantSuggestion(t, wsDo(t, env, "GET", "/v1/me/discoverable", u.Access, nil).Want(t, 200), gone, d)
			meExec(t, env, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, gone, env.Clock.Now().UnixMicro())
			wsWantSuggestion(t, wsDo(t, env, "GET", "/v1/me/discoverable", u.Access, nil).Want(t, 200), "", "")
			wsDo(t, env, "POST", "/v1/me/discoverable/join", u.Access, nil).Want(t, 404)
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
		w := wsNewWorld(t, env)
		suggest, auto := wsDomain(), wsDomain()
		autoUser := wsVerifiedAt(t, env, auto)
		claim := wsVerifiedDomain(t, env, w.owner.Access, w.org, suggest, "suggest")
		wsVerifiedDomain(t, env, w.owner.Access, w.org, auto, "auto_join")
		autoMember := wsVerifiedAt(t, env, auto) // added at verification
		joiner := wsVerifiedAt(t, env, suggest)
		pending := wsRegisterAt(t, env, suggest)
		admin := wsVerifiedAt(t, env, suggest)
		meExec(t, env, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'admin', $3)`, w.org, admin.UserID, env.Clock.Now().UnixMicro())
		elsewhere := wsVerifiedAt(t, env, wsDomain())
		keyHolder := wsVerifiedAt(t, env, suggest)
		keyToken := meKeyToken(t, env, keyHolder)
		join := "/v1/me/discoverable/join"

		joined := func(a *testenv.Account, role string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				body := r.JSON()
				if tt, ok := body["token_type"]; ok && tt != "Bearer" {
					t.Errorf("token_type = %v; want Bearer when present", tt)
				}
				delete(body, "token_type")
				wsCheckKeys(t, "join answer", body, "org", "access_token", "expires_at")
				org := wsObj(t, r, "org")
				if org["id"] != w.org || org["kind"] != "team" || org["role"] != role {
					t.Errorf("org = %v; want the team org %s with role %s", org, w.org, role)
				}
				if got := meStrings(org["tools"]); !slices.Equal(got, allTools) {
					t.Errorf("org.tools = %v; want %v", org["tools"], allTools)
				}
				meNear(t, "expires_at", meTime(t, "expires_at", r.Get("expires_at")), env.Clock.Now().Add(time.Hour))
				c := meClaims(t, r.Str("access_token"))
				if c["sub"] != a.UserID || c["via"] != "password" {
					t.Errorf("claims sub, via = %v, %v; want %s, password (kept from the presented token)", c["sub"], c["via"], a.UserID)
				}
				if id, gotRole, tools := wsTokenOrg(t, r.Str("access_token")); id != w.org || gotRole != role || !slices.Equal(tools, allTools) {
					t.Errorf("token org claim = {%s %s %v}; want {%s %s all tools}", id, gotRole, tools, w.org, role)
				}
				if got := wsRole(t, env, w.org, a.UserID); got != role {
					t.Errorf("membership role = %q; want %q", got, role)
				}
				// The new token works in the org; the default org moved there.
				wsDo(t, env, "GET", "/v1/orgs/"+w.org+"/teams", r.Str("access_token"), nil).Want(t, 200)
				if _, def := wsOrgIDs(t, env, a.Access); def != w.org {
					t.Errorf("default org = %s; want %s", def, w.org)
				}
			}
		}
		wsRun(t, env, []wsCase{
			{name: "offered org", method: "POST", path: join, token: joiner.Access, wantStatus: 200, wantBody: joined(joiner, "member")},
			{name: "no longer suggested", method: "GET", path: "/v1/me/discoverable", token: joiner.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) { wsWantSuggestion(t, r, "", "") }},
			{name: "again: idempotent", method: "POST", path: join, token: joiner.Access, wantStatus: 200, wantBody: joined(joiner, "member")},
			{name: "existing admin keeps the role", method: "POST", path: join, token: admin.Access, wantStatus: 200, wantBody: joined(admin, "admin")},
			{name: "refresh lands in the joined org", method: "POST", path: "/v1/auth/refresh", body: map[string]string{"refresh_token": joiner.Refresh}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					if r.Str("org.id") != w.org || r.Str("org.role") != "member" {
						t.Errorf("refreshed org = %v; want %s as member", r.Get("org"), w.org)
					}
				}},
			{name: "no offer: auto_join domain only", method: "POST", path: join, token: autoUser.Access, wantStatus: 404},
			{name: "auto_join member: idempotent", method: "POST", path: join, token: autoMember.Access, wantStatus: 200, wantBody: joined(autoMember, "member")},
			{name: "no offer: address at another domain", method: "POST", path: join, token: elsewhere.Access, wantStatus: 404},
			{name: "API-key token cannot leave its workspace", method: "POST", path: join, token: keyToken, wantStatus: 403},
			{name: "no token", method: "POST", path: join, wantStatus: 401},
		})

		t.Run("unverified email is not offered", func(t *testing.T) {
			r := wsDo(t, env, "POST", join, pending.Access, nil)
			if r.Status != 403 && r.Status != 404 {
				t.Errorf("status = %d, body %s; want 403 or 404", r.Status, r.Body)
			}
			if got := wsRole(t, env, w.org, pending.UserID); got != "" {
				t.Errorf("unverified user joined as %q; want not a member", got)
			}
		})
		t.Run("refused joins added nobody", func(t *testing.T) {
			for _, a := range []*testenv.Account{autoUser, elsewhere, keyHolder} {
				if got := wsRole(t, env, w.org, a.UserID); got != "" {
					t.Errorf("user %s is %q in the org; want not a member", a.Email, got)
				}
			}
		})

		t.Run("removing the claim keeps members, stops discovery", func(t *testing.T) {
			wsDo(t, env, "DELETE", "/v1/orgs/"+w.org+"/domains/"+claim, w.owner.Access, nil).Want(t, 200)
			if got := wsRole(t, env, w.org, joiner.UserID); got != "member" {
				t.Errorf("joiner's role after the claim was removed = %q; want member", got)
			}
			late := wsVerifiedAt(t, env, suggest)
			wsWantSuggestion(t, wsDo(t, env, "GET", "/v1/me/discoverable", late.Access, nil).Want(t, 200), "", "")
			wsDo(t, env, "POST", join, late.Access, nil).Want(t, 404)
			// Members of the org stay too for an already-joined caller.
			if got := wsRole(t, env, w.org, admin.UserID); got != "admin" {
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
		w := wsNewWorld(t, env)
		auto := wsDomain()
		claim := wsVerifiedDomain(t, env, w.owner.Access, w.org, auto, "auto_join")

		t.Run("register withholds, verify-email joins", func(t *testing.T) {
			a := wsRegisterAt(t, env, auto)
			if got := wsRole(t, env, w.org, a.UserID); got != "" {
				t.Fatalf("registered user is %q in the org before verifying; want not a member", got)
			}
			if ids, _ := wsOrgIDs(t, env, a.Access); slices.Contains(ids, w.org) {
				t.Errorf("GET /v1/me/orgs lists the org before verification: %v", ids)
			}
			wsVerifyEmail(t, env, a)
			if got := wsRole(t, env, w.org, a.UserID); got != "member" {
				t.Fatalf("role after verify-email = %q; want member", got)
			}
			if ids, _ := wsOrgIDs(t, env, a.Access); !slices.Contains(ids, w.org) {
				t.Errorf("GET /v1/me/orgs = %v; want it to list the org %s", ids, w.org)
			}
			wsWantSuggestion(t, wsDo(t, env, "GET", "/v1/me/discoverable", a.Access, nil).Want(t, 200), "", "")
			// The new member can switch into the org.
			r := wsDo(t, env, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": w.org}).Want(t, 200)
			if r.Str("org.role") != "member" {
				t.Errorf("switch-org role = %v; want member", r.Get("org.role"))
			}
		})

		t.Run("magic-link sign-up joins at once", func(t *testing.T) {
			email := "x-" + testenv.RandomHex(5) + "@" + auto
			r := wsDo(t, env, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": signinMagicToken(t, env, email)}).Want(t, 200)
			if r.Get("user.email_verified") != true {
				t.Errorf("user.email_verified = %v; want true", r.Get("user.email_verified"))
			}
			if got := wsRole(t, env, w.org, r.Str("user.id")); got != "member" {
				t.Errorf("role after magic-link sign-up = %q; want member", got)
			}
		})

		t.Run("magic link of an unverified account joins", func(t *testing.T) {
			a := wsRegisterAt(t, env, auto)
			wsDo(t, env, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": signinMagicToken(t, env, a.Email)}).Want(t, 200)
			if got := wsRole(t, env, w.org, a.UserID); got != "member" {
				t.Errorf("role after the magic link proved the address = %q; want member", got)
			}
		})

		t.Run("mixed-case address", func(t *testing.T) {
			a := &testenv.Account{Email: "Mixed-" + testenv.RandomHex(4) + "@" + strings.ToUpper(auto), Password: "password-1234"}
			r := wsDo(t, env, "POST", "/v1/auth/register", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			a.UserID, a.Email = r.Str("user.id"), r.Str("user.email")
			wsVerifyEmail(t, env, a)
			if got := wsRole(t, env, w.org, a.UserID); got != "member" {
				t.Errorf("role = %q; want member", got)
			}
		})

		t.Run("suggest mode does not auto-join", func(t *testing.T) {
			d := wsDomain()
			wsVerifiedDomain(t, env, w.owner.Access, w.org, d, "suggest")
			a := wsVerifiedAt(t, env, d)
			if got := wsRole(t, env, w.org, a.UserID); got != "" {
				t.Errorf("role = %q; want not a member (suggest mode only suggests)", got)
			}
		})

		t.Run("unverified claim does not auto-join", func(t *testing.T) {
			d := wsDomain()
			wsClaim(t, env, w.owner.Access, w.org, d, "auto_join")
			a := wsVerifiedAt(t, env, d)
			if got := wsRole(t, env, w.org, a.UserID); got != "" {
				t.Errorf("role = %q; want not a member", got)
			}
		})

		t.Run("removing the claim keeps auto-joined members", func(t *testing.T) {
			a := wsVerifiedAt(t, env, auto)
			wsDo(t, env, "DELETE", "/v1/orgs/"+w.org+"/domains/"+claim, w.owner.Access, nil).Want(t, 200)
			if got := wsRole(t, env, w.org, a.UserID); got != "member" {
				t.Errorf("role after the claim was removed = %q; want member", got)
			}
			b := wsVerifiedAt(t, env, auto)
			if got := wsRole(t, env, w.org, b.UserID); got != "" {
				t.Errorf("a user verified after the claim was removed is %q; want not a member", got)
			}
		})
	})
}
