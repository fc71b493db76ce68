package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// fullCall is a full-session route called with an old access token: a
// never-expiring user API key, what a thief would make first.
func fullCall(t testing.TB, env *testenv.Env, access string) *testenv.Resp {
	t.Helper()
	return env.Do(t, "POST", "/v1/me/api-keys", access, map[string]any{"name": "forever", "expires_in_days": 0})
}

// wantEnded fails unless a full route refuses access with 401 {error}.
func wantEnded(t testing.TB, env *testenv.Env, access string) {
	t.Helper()
	r := fullCall(t, env, access)
	if r.Status != 401 {
		t.Fatalf("POST /v1/me/api-keys with the ended session's token: status = %d, body %s; want 401", r.Status, r.Body)
	}
	testenv.CheckError(t, "POST /v1/me/api-keys", r)
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
			wantEnded(t, env, a.Access)
		})

		t.Run("password change ends the other sessions, not this one", func(t *testing.T) {
			a := env.Register(t)
			other, _ := env.NewSession(t, a)
			fullCall(t, env, other).Want(t, 200)
			env.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": a.Password, "new_password": "a-brand-new-password"}).Want(t, 200)
			wantEnded(t, env, other)
			fullCall(t, env, a.Access).Want(t, 200)
		})

		t.Run("DELETE /v1/me/sessions/{sid}", func(t *testing.T) {
			a := env.Register(t)
			other, _ := env.NewSession(t, a)
			env.Do(t, "DELETE", "/v1/me/sessions/"+testenv.SID(t, other), a.Access, nil).Want(t, 200)
			wantEnded(t, env, other)
			fullCall(t, env, a.Access).Want(t, 200)
		})

		t.Run("refresh-token reuse", func(t *testing.T) {
			a := env.Register(t)
			r := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 200)
			access := r.Str("access_token")
			// Inside the race window the session lives on.
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 401)
			fullCall(t, env, access).Want(t, 200)
			env.Clock.Advance(identity.RefreshReuseSkew + time.Second)
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}).Want(t, 401)
			wantEnded(t, env, access)
			wantEnded(t, env, a.Access)
		})

		t.Run("session expired", func(t *testing.T) {
			a := env.Register(t)
			env.Exec(t, `UPDATE sessions SET expires_at = $1 WHERE id = $2`, env.Clock.Now().UnixMicro(), testenv.SID(t, a.Access))
			wantEnded(t, env, a.Access)
		})

		t.Run("account deleted", func(t *testing.T) {
			a := env.Register(t)
			other, _ := env.NewSession(t, a)
			env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			wantEnded(t, env, other)
			wantEnded(t, env, a.Access)
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
			env.Do(t, "GET", "/v1/me/sessions", env.KeyToken(t, a), nil).Want(t, 403)
		})
	})
}
