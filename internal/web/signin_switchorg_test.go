package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// signinCheckOrgToken checks a switch-org answer {access_token, expires_at,
// org}: no refresh token, the token scoped to orgID with the presented
// token's session and via.
func signinCheckOrgToken(t *testing.T, env *testenv.Env, r *testenv.Resp, presented, orgID, kind string) {
	t.Helper()
	body := r.JSON()
	for _, k := range []string{"access_token", "expires_at", "org"} {
		if _, ok := body[k]; !ok {
			t.Errorf("switch-org answer has no field %q; body %s", k, r.Body)
		}
	}
	if _, ok := body["refresh_token"]; ok {
		t.Errorf("switch-org answer has a refresh_token; want the refresh token left unchanged (spec 4.1 rule 4)")
	}
	signinCheckExpiry(t, env, r.Str("expires_at"), time.Hour)
	org, _ := body["org"].(map[string]any)
	signinCheckOrg(t, org, orgID, kind, "owner")
	was := signinAccessClaims(t, presented)
	c := signinAccessClaims(t, r.Str("access_token"))
	via, _ := was["via"].(string)
	signinCheckClaims(t, c, was["sub"], org, via)
	if c["sid"] != was["sid"] {
		t.Errorf("switched token sid = %v; want the presented token's %v", c["sid"], was["sid"])
	}
}

func TestSigninSwitchOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		const path = "/v1/auth/switch-org"
		runSigninCases(t, env, []signinCase{
			{name: "own personal org", method: "POST", path: path, token: a.Access, body: map[string]string{"org_id": a.OrgID}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckOrgToken(t, env, r, a.Access, a.OrgID, "personal")
					signinCall(t, env, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
				}},
			{name: "missing org_id", method: "POST", path: path, token: a.Access, body: map[string]string{}, wantStatus: 400,
				wantBody: signinErrorNames("org_id")},
			{name: "empty org_id", method: "POST", path: path, token: a.Access, body: map[string]string{"org_id": ""}, wantStatus: 400,
				wantBody: signinErrorNames("org_id")},
			{name: "org_id as a number", method: "POST", path: path, token: a.Access, body: map[string]any{"org_id": 7}, wantStatus: 400,
				wantBody: signinErrorNames("org_id")},
			{name: "empty body", method: "POST", path: path, token: a.Access, wantStatus: 400, wantBody: signinErrorNames("org_id")},
			{name: "another user's personal org", method: "POST", path: path, token: a.Access, body: map[string]string{"org_id": b.OrgID},
				wantStatus: 403},
			{name: "random uuid", method: "POST", path: path, token: a.Access, body: map[string]string{"org_id": "6f1c2a7e-8d3b-4c55-9e0a-2b7d9c4e1f30"},
				wantStatus: 403},
			{name: "not a uuid", method: "POST", path: path, token: a.Access, body: map[string]string{"org_id": "not-a-uuid"}, wantStatus: 403},
			{name: "without token", method: "POST", path: path, body: map[string]string{"org_id": a.OrgID}, wantStatus: 401},
			{name: "with a bad token", method: "POST", path: path, token: "not.a.jwt", body: map[string]string{"org_id": a.OrgID}, wantStatus: 401},
			{name: "with a refresh token as bearer", method: "POST", path: path, token: a.Refresh, body: map[string]string{"org_id": a.OrgID},
				wantStatus: 401},
		})
		t.Run("refresh token is unchanged", func(t *testing.T) {
			signinRefresh(t, env, a.Refresh).Want(t, 200)
		})
	})
}

// signinTeamOrg makes a team org owned by a, through POST /v1/orgs when
// seeded is false (skipping while that route is not built) and straight in
// the store when it is true.
func signinTeamOrg(t *testing.T, env *testenv.Env, a *testenv.Account, seeded bool) string {
	t.Helper()
	name := "Acme Team " + testenv.RandomHex(3)
	if seeded {
		ctx := context.Background()
		now := env.Clock.Now()
		o := &accounts.Org{ID: uuid.NewString(), Name: name, Slug: "acme-" + testenv.RandomHex(4), Kind: accounts.OrgTeam, CreatedAt: now}
		if err := env.Store.CreateOrg(ctx, o); err != nil {
			t.Fatalf("seed team org: %v", err)
		}
		if err := env.Store.AddMember(ctx, &accounts.Membership{OrgID: o.ID, UserID: a.UserID, Role: accounts.RoleOwner, JoinedAt: now}); err != nil {
			t.Fatalf("seed membership: %v", err)
		}
		return o.ID
	}
	created := signinCall(t, env, "POST", "/v1/orgs", a.Access, map[string]string{"name": name})
	if created.Status == 404 || created.Status == 405 {
		t.Skipf("POST /v1/orgs answers %d: team orgs cannot be created over HTTP yet (the seeded variant covers switch-org meanwhile)", created.Status)
	}
	created.Want(t, 200)
	id, _ := created.Get("org.id").(string)
	if !signinUUID.MatchString(id) {
		t.Fatalf("POST /v1/orgs org.id = %v; want a uuid; body %s", created.Get("org.id"), created.Body)
	}
	return id
}

func TestSigninSwitchOrgDefault(t *testing.T) {
	for _, setup := range []struct {
		name   string
		seeded bool
	}{{"team org from POST /v1/orgs", false}, {"team org seeded in the store", true}} {
		t.Run(setup.name, func(t *testing.T) {
			testenv.Run(t, func(t *testing.T, env *testenv.Env) {
				a := env.Register(t)
				team := signinTeamOrg(t, env, a, setup.seeded)
				refresh := a.Refresh
				// switchTo switches a's session to orgID and checks the answer.
				switchTo := func(t *testing.T, orgID, kind string) {
					t.Helper()
					r := signinCall(t, env, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": orgID}).Want(t, 200)
					signinCheckOrgToken(t, env, r, a.Access, orgID, kind)
					me := signinCall(t, env, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
					if got := me.Str("org.id"); got != orgID {
						t.Errorf("me org.id with the switched token = %q; want %q", got, orgID)
					}
				}
				// refreshInto refreshes the session and checks its token is
				// scoped to orgID.
				refreshInto := func(t *testing.T, orgID, kind string) {
					t.Helper()
					r := signinRefresh(t, env, refresh).Want(t, 200)
					refresh = r.Str("refresh_token")
					signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: orgID, orgKind: kind})
				}
				t.Run("switch to the team org", func(t *testing.T) { switchTo(t, team, "team") })
				t.Run("refresh is scoped to the team org", func(t *testing.T) { refreshInto(t, team, "team") })
				t.Run("a new login is scoped to the team org", func(t *testing.T) {
					r := signinLogin(t, env, a.Email, a.Password).Want(t, 200)
					signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "password", userID: a.UserID, orgID: team, orgKind: "team"})
				})
				t.Run("switch back to the personal org", func(t *testing.T) { switchTo(t, a.OrgID, "personal") })
				t.Run("refresh is scoped to the personal org", func(t *testing.T) { refreshInto(t, a.OrgID, "personal") })
			})
		})
	}
}

func TestSigninMe(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		runSigninCases(t, env, []signinCase{
			{name: "me", method: "GET", path: "/v1/auth/me", token: a.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					body := r.JSON()
					if len(body) != 2 {
						t.Errorf("me body %s; want exactly {user, org}", r.Body)
					}
					u, _ := body["user"].(map[string]any)
					signinCheckUser(t, u, a.Email, a.Name, false)
					if u != nil && u["id"] != a.UserID {
						t.Errorf("user.id = %v; want %s", u["id"], a.UserID)
					}
					o, _ := body["org"].(map[string]any)
					signinCheckOrg(t, o, a.OrgID, "personal", "owner")
				}},
			{name: "me without token", method: "GET", path: "/v1/auth/me", wantStatus: 401},
			{name: "me with a bad token", method: "GET", path: "/v1/auth/me", token: "garbage", wantStatus: 401},
			{name: "me with a refresh token", method: "GET", path: "/v1/auth/me", token: a.Refresh, wantStatus: 401},
			{name: "verify", method: "GET", path: "/v1/auth/verify", token: a.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					want := map[string]any{"valid": true, "user_id": a.UserID, "email": a.Email, "name": a.Name, "org_id": a.OrgID, "org_role": "owner"}
					got := r.JSON()
					for k, v := range want {
						if got[k] != v {
							t.Errorf("verify %s = %v; want %v", k, got[k], v)
						}
					}
				}},
			{name: "verify without token", method: "GET", path: "/v1/auth/verify", wantStatus: 401},
			{name: "verify with a bad token", method: "GET", path: "/v1/auth/verify", token: "garbage", wantStatus: 401},
			{name: "verify with a truncated token", method: "GET", path: "/v1/auth/verify", token: a.Access[:len(a.Access)-5], wantStatus: 401},
		})
		t.Run("bearer scheme is required", func(t *testing.T) {
			r := signinAuthHeader(t, env, "/v1/auth/me", "Basic "+a.Access)
			if r.Status != 401 {
				t.Errorf("Authorization: Basic <token>: status = %d, body %s; want 401", r.Status, r.Body)
			}
			r = signinAuthHeader(t, env, "/v1/auth/me", a.Access)
			if r.Status != 401 {
				t.Errorf("Authorization: <token> without scheme: status = %d, body %s; want 401", r.Status, r.Body)
			}
		})
	})
}

func TestSigninDeletedAccount(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		del := signinCall(t, env, "DELETE", "/v1/me", a.Access, nil)
		if del.Status == 404 || del.Status == 405 {
			t.Skipf("DELETE /v1/me answers %d: account deletion is not built yet", del.Status)
		}
		del.Want(t, 200)
		runSigninCases(t, env, []signinCase{
			// The token is still well signed; the user behind it is gone.
			{name: "me of a deleted account", method: "GET", path: "/v1/auth/me", token: a.Access, wantStatus: 404},
			{name: "verify of a deleted account", method: "GET", path: "/v1/auth/verify", token: a.Access, wantStatus: 401},
			{name: "refresh of a deleted account", method: "POST", path: "/v1/auth/refresh", body: map[string]string{"refresh_token": a.Refresh},
				wantStatus: 401},
			{name: "login of a deleted account", method: "POST", path: "/v1/auth/login",
				body: map[string]string{"email": a.Email, "password": a.Password}, wantStatus: 401},
			{name: "logout of a deleted account", method: "POST", path: "/v1/auth/logout", body: map[string]string{"refresh_token": a.Refresh},
				wantStatus: 200},
			{name: "the address can register again", method: "POST", path: "/v1/auth/register",
				body: map[string]string{"email": a.Email, "password": a.Password}, wantStatus: 200},
		})
	})
}
