package identity_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSessions covers "GET /v1/me/sessions" and "DELETE
// /v1/me/sessions/{sid}" (spec 4.2 rule 4; section 3: an already revoked
// session reads as 404).
func TestSessions(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		type sess struct{ id, access, refresh string }
		all := []sess{{testenv.SID(t, a.Access), a.Access, a.Refresh}}
		for range 3 {
			env.Clock.Advance(time.Second)
			acc, ref := env.NewSession(t, a)
			all = append(all, sess{testenv.SID(t, acc), acc, ref})
		}
		caller := all[2] // neither the newest nor the oldest

		t.Run("list newest first with current", func(t *testing.T) {
			rows := env.Do(t, "GET", "/v1/me/sessions", caller.access, nil).Want(t, 200).List(t, "sessions")
			if len(rows) != 4 {
				t.Fatalf("sessions = %d; want 4", len(rows))
			}
			for i, row := range rows {
				want := all[3-i]
				if row["id"] != want.id {
					t.Errorf("sessions[%d].id = %v; want %s", i, row["id"], want.id)
				}
				if got, wantCur := row["current"], want.id == caller.id; got != wantCur {
					t.Errorf("sessions[%d].current = %v; want %v", i, got, wantCur)
				}
				for _, f := range []string{"created_at", "expires_at", "last_used_at"} {
					testenv.Time(t, f, row[f])
				}
				for _, f := range []string{"user_agent", "ip"} {
					if _, ok := row[f].(string); !ok {
						t.Errorf("sessions[%d].%s = %#v; want a string", i, f, row[f])
					}
				}
				if i > 0 && !testenv.Time(t, "created_at", row["created_at"]).Before(testenv.Time(t, "created_at", rows[i-1]["created_at"])) {
					t.Errorf("sessions[%d].created_at %v not before sessions[%d].created_at %v", i, row["created_at"], i-1, rows[i-1]["created_at"])
				}
			}
		})

		t.Run("delete another session", func(t *testing.T) {
			victim := all[1]
			r := env.Do(t, "DELETE", "/v1/me/sessions/"+victim.id, caller.access, nil).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": victim.refresh}).Want(t, 401)
			for _, row := range env.Do(t, "GET", "/v1/me/sessions", caller.access, nil).Want(t, 200).List(t, "sessions") {
				if row["id"] == victim.id {
					t.Errorf("revoked session %s still listed", victim.id)
				}
			}
		})

		t.Run("refused deletes", func(t *testing.T) {
			keyToken := env.KeyToken(t, a)
			otherSID := testenv.SID(t, other.Access)
			env.RunCases(t, []testenv.Case{
				{Name: "already revoked", Method: "DELETE", Path: "/v1/me/sessions/" + all[1].id, Token: caller.access, Want: 404},
				{Name: "random uuid", Method: "DELETE", Path: "/v1/me/sessions/" + uuid.NewString(), Token: caller.access, Want: 404},
				{Name: "another user's session", Method: "DELETE", Path: "/v1/me/sessions/" + otherSID, Token: caller.access, Want: 404},
				{Name: "not a uuid", Method: "DELETE", Path: "/v1/me/sessions/" + "not-a-uuid", Token: caller.access, Want: 404},
				{Name: "api-key token", Method: "DELETE", Path: "/v1/me/sessions/" + all[0].id, Token: keyToken, Want: 403},
				{Name: "no token", Method: "DELETE", Path: "/v1/me/sessions/" + all[0].id, Want: 401},
			})
			// The refused deletes left the sessions alone.
			ref := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": other.Refresh}).Want(t, 200)
			other.Refresh = ref.Str("refresh_token")
			ref = env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": all[0].refresh}).Want(t, 200)
			all[0].refresh = ref.Str("refresh_token")
		})

		t.Run("refused lists", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				{Name: "api-key token", Method: "GET", Path: "/v1/me/sessions", Token: env.KeyToken(t, a), Want: 403},
				{Name: "no token", Method: "GET", Path: "/v1/me/sessions", Want: 401},
				{Name: "garbage token", Method: "GET", Path: "/v1/me/sessions", Token: "x.y.z", Want: 401},
			})
		})

		t.Run("expired sessions are not listed", func(t *testing.T) {
			env.Clock.Advance(31 * 24 * time.Hour)
			acc, _ := env.NewSession(t, a)
			rows := env.Do(t, "GET", "/v1/me/sessions", acc, nil).Want(t, 200).List(t, "sessions")
			if len(rows) != 1 || rows[0]["id"] != testenv.SID(t, acc) || rows[0]["current"] != true {
				t.Errorf("sessions = %v; want only the new current session %s", rows, testenv.SID(t, acc))
			}
		})
	})
}

// insertGrant inserts a connected OAuth app for user in org, with a session
// whose refresh token is the returned secret (the OAuth server that makes
// grants is not built yet).
func insertGrant(t *testing.T, env *testenv.Env, userID, orgID, clientName string) (grantID, refresh string) {
	t.Helper()
	now := env.Clock.Now()
	grantID, sid := uuid.NewString(), uuid.NewString()
	refresh = sid + "." + testenv.RandomHex(32)
	env.Exec(t, `INSERT INTO oauth_grants (id, user_id, client_id, client_name, org_id, scope, resource, created_at)
		VALUES ($1, $2, $3, $4, $5, 'tasks notes', '', $6)`, grantID, userID, "client-"+testenv.RandomHex(4), clientName, orgID, now.UnixMicro())
	env.Exec(t, `INSERT INTO sessions (id, user_id, via, grant_id, org_id, user_agent, ip, created_at, expires_at, last_used_at, refresh_hash)
		VALUES ($1, $2, 'oauth', $3, $4, 'ExampleApp/1.0', '127.0.0.1', $5, $6, $5, $7)`,
		sid, userID, grantID, orgID, now.UnixMicro(), now.Add(30*24*time.Hour).UnixMicro(), hashSecret(refresh))
	return grantID, refresh
}

// TestGrants covers "GET /v1/me/grants" and "DELETE /v1/me/grants/{gid}"
// (spec 4.2, section 5 rule 6).
func TestGrants(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)

		t.Run("empty list is an array", func(t *testing.T) {
			r := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200)
			if rows := r.List(t, "grants"); len(rows) != 0 {
				t.Errorf("grants = %v; want []", rows)
			}
		})

		gid, refresh := insertGrant(t, env, a.UserID, a.OrgID, "Example App")
		env.Clock.Advance(time.Second)
		gid2, refresh2 := insertGrant(t, env, a.UserID, a.OrgID, "Second App")
		// The grant's session works before it is revoked.
		refresh = env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh}).Want(t, 200).Str("refresh_token")

		t.Run("list", func(t *testing.T) {
			rows := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200).List(t, "grants")
			if len(rows) != 2 {
				t.Fatalf("grants = %v; want 2", rows)
			}
			var g map[string]any
			for _, row := range rows {
				if row["id"] == gid {
					g = row
				}
			}
			if g == nil {
				t.Fatalf("grant %s not listed in %v", gid, rows)
			}
			for _, f := range []string{"id", "client_id", "client_name", "org_id", "scope", "created_at"} {
				if _, ok := g[f].(string); !ok {
					t.Errorf("grant %s = %#v; want a string", f, g[f])
				}
			}
			if g["client_name"] != "Example App" || g["org_id"] != a.OrgID || g["scope"] != "tasks notes" {
				t.Errorf("grant = %v; want client_name Example App, org_id %s, scope \"tasks notes\"", g, a.OrgID)
			}
			testenv.Time(t, "created_at", g["created_at"])
		})

		t.Run("revoke", func(t *testing.T) {
			r := env.Do(t, "DELETE", "/v1/me/grants/"+gid, a.Access, nil).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh}).Want(t, 401)
			rows := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200).List(t, "grants")
			if len(rows) != 1 || rows[0]["id"] != gid2 {
				t.Errorf("grants after revoke = %v; want only %s", rows, gid2)
			}
		})

		t.Run("refused", func(t *testing.T) {
			keyToken := env.KeyToken(t, a)
			env.RunCases(t, []testenv.Case{
				{Name: "delete again", Method: "DELETE", Path: "/v1/me/grants/" + gid, Token: a.Access, Want: 404},
				{Name: "delete another user's grant", Method: "DELETE", Path: "/v1/me/grants/" + gid2, Token: b.Access, Want: 404},
				{Name: "delete random uuid", Method: "DELETE", Path: "/v1/me/grants/" + uuid.NewString(), Token: a.Access, Want: 404},
				{Name: "delete not a uuid", Method: "DELETE", Path: "/v1/me/grants/nope", Token: a.Access, Want: 404},
				{Name: "delete with api-key token", Method: "DELETE", Path: "/v1/me/grants/" + gid2, Token: keyToken, Want: 403},
				{Name: "list with api-key token", Method: "GET", Path: "/v1/me/grants", Token: keyToken, Want: 403},
				{Name: "list without token", Method: "GET", Path: "/v1/me/grants", Want: 401},
				{Name: "delete without token", Method: "DELETE", Path: "/v1/me/grants/" + gid2, Want: 401},
			})
			// The second grant survived every refused delete.
			env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh2}).Want(t, 200)
			if rows := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200).List(t, "grants"); len(rows) != 1 {
				t.Errorf("grants = %v; want the second grant still listed", rows)
			}
		})
	})
}

// hashSecret is the stored form of a secret: SHA-256 hex
// (docs/decisions.md).
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

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
