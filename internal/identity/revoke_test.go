package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// revokeCase arranges a token and the action that revokes it, taken on env.
type revokeCase struct {
	name    string
	arrange func(t *testing.T, env *testenv.Env, owner, u *testenv.Account, org string) (victim string, revoke func())
}

var newPassword = "Harbor-" + testenv.RandomHex(8) + "-rotated"

var revokeCases = []revokeCase{
	{"session revoked", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, _ string) (string, func()) {
		other, _ := env.NewSession(t, u)
		return u.Token, func() { env.Do(t, "DELETE", "/v1/me/sessions/"+testenv.SID(t, u.Token), other, nil).Want(t, 200) }
	}},
	{"logout", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, _ string) (string, func()) {
		return u.Token, func() {
			env.Call(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": u.Refresh}).Want(t, 200)
		}
	}},
	{"password changed", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, _ string) (string, func()) {
		other, _ := env.NewSession(t, u)
		return u.Token, func() {
			env.Do(t, "POST", "/v1/me/password", other, map[string]string{"current_password": u.Password, "new_password": newPassword}).Want(t, 200)
		}
	}},
	{"password reset", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, _ string) (string, func()) {
		return u.Token, func() {
			tok := requestReset(t, env, u.Email)
			env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(tok, newPassword)).Want(t, 200)
		}
	}},
	{"grant deleted", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, org string) (string, func()) {
		ctx := context.Background()
		g, err := env.Svc.CreateGrant(ctx, identity.GrantInput{UserID: u.UserID, ClientID: "https://client.test/meta.json", ClientName: "Client", OrgID: org, Scope: "openid"})
		if err != nil {
			t.Fatal(err)
		}
		si, err := env.Svc.StartGrantSession(ctx, env.Store, g.ID, gatehouse.SessionMeta{UserAgent: "test", IP: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		return si.AccessToken, func() { env.Do(t, "DELETE", "/v1/me/grants/"+g.ID, u.Token, nil).Want(t, 200) }
	}},
	{"personal key revoked", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, org string) (string, func()) {
		k := env.CreateUserKey(t, u.Token, map[string]any{"name": "ci", "org_id": org})
		tok := env.Exchange(t, k.Str("api_key.secret")).Want(t, 200).Str("access_token")
		return tok, func() { env.Do(t, "DELETE", "/v1/me/api-keys/"+k.Str("api_key.id"), u.Token, nil).Want(t, 200) }
	}},
	{"org key revoked", func(t *testing.T, env *testenv.Env, owner, _ *testenv.Account, org string) (string, func()) {
		k := env.CreateOrgKey(t, owner.Token, org, map[string]any{"name": "ci", "role": "member"})
		tok := env.Exchange(t, k.Str("api_key.secret")).Want(t, 200).Str("access_token")
		return tok, func() {
			env.Do(t, "DELETE", "/v1/orgs/"+org+"/api-keys/"+k.Str("api_key.id"), owner.Token, nil).Want(t, 200)
		}
	}},
	{"member removed", func(t *testing.T, env *testenv.Env, owner, u *testenv.Account, org string) (string, func()) {
		return u.Token, func() { env.Do(t, "DELETE", "/v1/orgs/"+org+"/members/"+u.UserID, owner.Token, nil).Want(t, 200) }
	}},
	{"org deleted", func(t *testing.T, env *testenv.Env, owner, u *testenv.Account, org string) (string, func()) {
		return u.Token, func() { env.Do(t, "DELETE", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200) }
	}},
	{"account deleted", func(t *testing.T, env *testenv.Env, _, u *testenv.Account, _ string) (string, func()) {
		return u.Token, func() { env.Do(t, "DELETE", "/v1/me", u.Token, nil).Want(t, 200) }
	}},
}

// TestRevocationAtOnce: for each revoking action (issue 13 item 7), the
// access token it revokes, which worked on every instance a moment
// before (so each instance's caches hold it as good), is refused 401 on
// GET /v1/auth/me, an org route and a tool API within 2 s: on the
// instance that revoked and on two more on the same database.
func TestRevocationAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		instances := []*testenv.Env{env, env.Another(t), env.Another(t)}
		for _, c := range revokeCases {
			t.Run(c.name, func(t *testing.T) {
				owner, org := env.Team(t)
				u := env.Join(t, owner, org, "member")
				victim, revoke := c.arrange(t, env, owner, u, org)
				for i, in := range instances {
					for _, path := range revokedPaths(org) {
						if r := in.Call(t, "GET", path, victim, nil); r.Status != 200 {
							t.Fatalf("instance %d: GET %s before the revocation = %d %s; want 200", i, path, r.Status, r.Body)
						}
					}
				}
				revoke()
				for i, in := range instances {
					for _, path := range revokedPaths(org) {
						wantRefused(t, in, i, path, victim)
					}
				}
			})
		}
	})
}

// revokedPaths are an identity route, an org route and a tool API.
func revokedPaths(org string) []string {
	return []string{"/v1/auth/me", "/v1/orgs/" + org, "/tasks/v1/issues"}
}

// wantRefused waits up to 2 s for path to refuse token with 401.
func wantRefused(t *testing.T, env *testenv.Env, i int, path, token string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := env.Call(t, "GET", path, token, nil)
		if r.Status == 401 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d: GET %s after the revocation = %d %s; want 401 within 2 s", i, path, r.Status, r.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRevocationLoadedAtStart: an instance started after a revocation
// loads the last hour of them before it serves, so it refuses the token
// on its first request.
func TestRevocationLoadedAtStart(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.Call(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200)
		env.Another(t).Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 401)
	})
}
