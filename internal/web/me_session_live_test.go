package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// meFullCall is a full-session route called with an old access token: a
// never-expiring user API key, what a thief would make first.
func meFullCall(t testing.TB, env *testenv.Env, access string) *testenv.Resp {
	t.Helper()
	return env.Do(t, "POST", "/v1/me/api-keys", access, map[string]any{"name": "forever", "expires_in_days": 0})
}

// meWantEnded fails unless a full route refuses access with 401 {error}.
func meWantEnded(t testing.TB, env *testenv.Env, access string) {
	t.Helper()
	r := meFullCall(t, env, access)
	if r.Status != 401 {
		t.Fatalf("POST /v1/me/api-keys with the ended session's token: status = %d, body %s; want 401", r.Status, r.Body)
	}
	meWantError(t, r)
}

// TestFullRoutesNeedLiveSession: a full route checks that the token's
// session is still live (issue 10 item 2), so an access token does not
// outlive the session that was ended for the rest of its hour.
func TestFullRoutesNeedLiveSession(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("logout", func(t *testing.T) {
			a := env.Register(t)
			env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200)
			meWantEnded(t, env, a.Access)
		})

		t.Run("password change ends the other sessions, not this one", func(t *testing.T) {
			a := env.Register(t)
			other, _ := meLogin(t, env, a)
			meFullCall(t, env, other).Want(t, 200)
			env.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": a.Password, "new_password": "a-brand-new-password"}).Want(t, 200)
			meWantEnded(t, env, other)
			meFullCall(t, env, a.Access).Want(t, 200)
		})

		t.Run("DELETE /v1/me/sessions/{sid}", func(t *testing.T) {
			a := env.Register(t)
			other, _ := meLogin(t, env, a)
			env.Do(t, "DELETE", "/v1/me/sessions/"+meSID(t, other), a.Access, nil).Want(t, 200)
			meWantEnded(t, env, other)
			meFullCall(t, env, a.Access).Want(t, 200)
		})

		t.Run("refresh-token reuse", func(t *testing.T) {
			a := env.Register(t)
			r := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200)
			access := r.Str("access_token")
			// Inside the race window the session lives on.
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 401)
			meFullCall(t, env, access).Want(t, 200)
			env.Clock.Advance(accounts.RefreshReuseSkew + time.Second)
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 401)
			meWantEnded(t, env, access)
			meWantEnded(t, env, a.Access)
		})

		t.Run("session expired", func(t *testing.T) {
			a := env.Register(t)
			meExec(t, env, `UPDATE sessions SET expires_at = $1 WHERE id = $2`, env.Clock.Now().UnixMicro(), meSID(t, a.Access))
			meWantEnded(t, env, a.Access)
		})

		t.Run("account deleted", func(t *testing.T) {
			a := env.Register(t)
			other, _ := meLogin(t, env, a)
			env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			meWantEnded(t, env, other)
			meWantEnded(t, env, a.Access)
		})

		t.Run("other full routes", func(t *testing.T) {
			a := env.Register(t)
			env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200)
			for _, c := range []struct{ method, path string }{
				{"GET", "/v1/me/sessions"},
				{"GET", "/v1/me/api-keys"},
				{"POST", "/v1/me/password"},
				{"DELETE", "/v1/me"},
				{"POST", "/v1/orgs/" + a.OrgID + "/api-keys"},
			} {
				r := env.Do(t, c.method, c.path, a.Access, map[string]any{"name": "k", "current_password": a.Password, "new_password": "another-password-1"})
				if r.Status != 401 {
					t.Errorf("%s %s after logout: status = %d, body %s; want 401", c.method, c.path, r.Status, r.Body)
				}
			}
			// Nothing was done with it: the password is unchanged.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("key tokens are still refused with 403", func(t *testing.T) {
			a := env.Register(t)
			env.Do(t, "GET", "/v1/me/sessions", meKeyToken(t, env, a), nil).Want(t, 403)
		})
	})
}
