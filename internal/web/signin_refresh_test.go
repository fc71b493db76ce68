package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninRefresh(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		const path = "/v1/auth/refresh"
		var next string
		runSigninCases(t, env, []signinCase{
			{name: "refresh token gives a new pair", method: "POST", path: path, body: map[string]string{"refresh_token": a.Refresh}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: a.OrgID})
					next = r.Str("refresh_token")
					if next == a.Refresh {
						t.Errorf("refresh_token unchanged; want a new one")
					}
					if r.Str("access_token") == a.Access {
						t.Errorf("access_token unchanged; want a new one")
					}
					old, now := signinAccessClaims(t, a.Access), signinAccessClaims(t, r.Str("access_token"))
					if old["sid"] != now["sid"] {
						t.Errorf("refreshed sid = %v; want the session's sid %v", now["sid"], old["sid"])
					}
					if old["jti"] == now["jti"] {
						t.Errorf("refreshed jti = %v; want a new one", now["jti"])
					}
				}},
			{name: "old refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": a.Refresh}, wantStatus: 401},
			{name: "unknown refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": "nope-" + testenv.RandomHex(16)},
				wantStatus: 401},
			{name: "access token as refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": a.Access}, wantStatus: 401},
			{name: "missing refresh token", method: "POST", path: path, body: map[string]string{}, wantStatus: 400,
				wantBody: signinErrorNames("refresh_token")},
			{name: "empty refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": ""}, wantStatus: 400,
				wantBody: signinErrorNames("refresh_token")},
			{name: "refresh token as a number", method: "POST", path: path, body: map[string]any{"refresh_token": 1}, wantStatus: 400,
				wantBody: signinErrorNames("refresh_token")},
			{name: "empty body", method: "POST", path: path, wantStatus: 400, wantBody: signinErrorNames("refresh_token")},
		})
		t.Run("new refresh token works", func(t *testing.T) {
			if next == "" {
				t.Skip("first refresh failed")
			}
			r := signinRefresh(t, env, next).Want(t, 200)
			signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: a.OrgID})
			signinCall(t, env, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
		})
	})
}

func TestSigninRefreshReuse(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		// rotate signs in and refreshes once: the rotated token and its
		// successor.
		rotate := func(t *testing.T) (old, newest string) {
			t.Helper()
			old = signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
			newest = signinRefresh(t, env, old).Want(t, 200).Str("refresh_token")
			return old, newest
		}
		t.Run("reuse within 10 seconds revokes nothing else", func(t *testing.T) {
			old, newest := rotate(t)
			env.Clock.Advance(10 * time.Second)
			signinRefresh(t, env, old).Want(t, 401)
			signinRefresh(t, env, newest).Want(t, 200)
		})
		t.Run("reuse after more than 10 seconds revokes the session", func(t *testing.T) {
			old, newest := rotate(t)
			other := signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
			env.Clock.Advance(11 * time.Second)
			signinRefresh(t, env, old).Want(t, 401)
			signinRefresh(t, env, newest).Want(t, 401)
			// Only that session: another sign-in of the same user is untouched.
			signinRefresh(t, env, other).Want(t, 200)
		})
		t.Run("reuse of an older token after two rotations revokes the session", func(t *testing.T) {
			first, second := rotate(t)
			third := signinRefresh(t, env, second).Want(t, 200).Str("refresh_token")
			env.Clock.Advance(time.Minute)
			signinRefresh(t, env, first).Want(t, 401)
			signinRefresh(t, env, third).Want(t, 401)
		})
	})
}

func TestSigninRefreshExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		kept := signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		idle := signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		t.Run("usable just before 30 days", func(t *testing.T) {
			env.Clock.Advance(30*24*time.Hour - time.Minute)
			signinRefresh(t, env, kept).Want(t, 200)
		})
		t.Run("expired after 30 days and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			signinRefresh(t, env, idle).Want(t, 401)
		})
	})
}

func TestSigninLogout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		other := signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		rotated := signinLogin(t, env, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		newest := signinRefresh(t, env, rotated).Want(t, 200).Str("refresh_token")
		const path = "/v1/auth/logout"
		runSigninCases(t, env, []signinCase{
			{name: "session's refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": a.Refresh}, wantStatus: 200,
				wantBody: signinWantMessage},
			{name: "its refresh token no longer refreshes", method: "POST", path: "/v1/auth/refresh", body: map[string]string{"refresh_token": a.Refresh},
				wantStatus: 401},
			{name: "same token twice", method: "POST", path: path, body: map[string]string{"refresh_token": a.Refresh}, wantStatus: 200,
				wantBody: signinWantMessage},
			{name: "unknown token", method: "POST", path: path, body: map[string]string{"refresh_token": "nope-" + testenv.RandomHex(16)},
				wantStatus: 200, wantBody: signinWantMessage},
			{name: "empty refresh token", method: "POST", path: path, body: map[string]string{"refresh_token": ""}, wantStatus: 200,
				wantBody: signinWantMessage},
			{name: "empty object", method: "POST", path: path, body: map[string]string{}, wantStatus: 200, wantBody: signinWantMessage},
			{name: "without body", method: "POST", path: path, wantStatus: 200, wantBody: signinWantMessage},
			{name: "another session is untouched", method: "POST", path: "/v1/auth/refresh", body: map[string]string{"refresh_token": other},
				wantStatus: 200},
			{name: "newest token of a rotated session", method: "POST", path: path, body: map[string]string{"refresh_token": newest},
				wantStatus: 200, wantBody: signinWantMessage},
			{name: "rotated session's newest token no longer refreshes", method: "POST", path: "/v1/auth/refresh",
				body: map[string]string{"refresh_token": newest}, wantStatus: 401},
		})
	})
}

// The token a refresh mints is scoped to the session's default org while
// the user is still a member there; once that org is gone it falls back
// to the personal org, which becomes the default again.
func TestSigninRefreshDefaultOrgGone(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := signinTeamOrg(t, env, a, false)
		switched := signinCall(t, env, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
		r := signinRefresh(t, env, a.Refresh).Want(t, 200)
		signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: team, orgKind: "team"})
		signinCall(t, env, "DELETE", "/v1/orgs/"+team, switched.Str("access_token"), nil).Want(t, 200)
		r = signinRefresh(t, env, r.Str("refresh_token")).Want(t, 200)
		signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: a.OrgID, orgKind: "personal"})
		r = signinRefresh(t, env, r.Str("refresh_token")).Want(t, 200)
		signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "refresh", userID: a.UserID, orgID: a.OrgID, orgKind: "personal"})
	})
}
