package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninRefresh(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		const path = "/v1/auth/refresh"
		var next string
		env.RunCases(t, []testenv.Case{
			{Name: "refresh token gives a new pair", Method: "POST", Path: path, Body: map[string]string{"refresh_token": a.Refresh}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: a.OrgID})
					next = r.Str("refresh_token")
					if next == a.Refresh {
						t.Errorf("refresh_token unchanged; want a new one")
					}
					if r.Str("access_token") == a.Access {
						t.Errorf("access_token unchanged; want a new one")
					}
					old, now := testenv.Claims(t, a.Access), testenv.Claims(t, r.Str("access_token"))
					if old["sid"] != now["sid"] {
						t.Errorf("refreshed sid = %v; want the session's sid %v", now["sid"], old["sid"])
					}
					if old["jti"] == now["jti"] {
						t.Errorf("refreshed jti = %v; want a new one", now["jti"])
					}
				}},
			{Name: "old refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": a.Refresh}, Want: 401},
			{Name: "unknown refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": "nope-" + testenv.RandomHex(16)},
				Want: 401},
			{Name: "access token as refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": a.Access}, Want: 401},
			{Name: "missing refresh token", Method: "POST", Path: path, Body: map[string]string{}, Want: 400,
				Check: testenv.ErrorNames("refresh_token")},
			{Name: "empty refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": ""}, Want: 400,
				Check: testenv.ErrorNames("refresh_token")},
			{Name: "refresh token as a number", Method: "POST", Path: path, Body: map[string]any{"refresh_token": 1}, Want: 400,
				Check: testenv.ErrorNames("refresh_token")},
			{Name: "empty body", Method: "POST", Path: path, Want: 400, Check: testenv.ErrorNames("refresh_token")},
		})
		t.Run("new refresh token works", func(t *testing.T) {
			if next == "" {
				t.Skip("first refresh failed")
			}
			r := env.Refresh(t, next).Want(t, 200)
			env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: a.OrgID})
			env.Call(t, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
		})
	})
}

// A refresh token names its session, whose id is no secret (access tokens
// carry it as sid). A token naming a session with any other secret, a
// secret of another session's (live or rotated) under this session's id,
// or a secret without its session is 401 and revokes nothing: knowing a
// session's id gives no way to end it, because the hash covers the id.
func TestSigninRefreshNamesItsSession(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		sidA, sidB := testenv.SID(t, a.Access), testenv.SID(t, b.Access)
		if !strings.HasPrefix(a.Refresh, sidA+".") || !strings.HasPrefix(b.Refresh, sidB+".") {
			t.Fatalf("refresh tokens %q, %q; want each to begin with its session id and a dot", a.Refresh, b.Refresh)
		}
		nextB := env.Refresh(t, b.Refresh).Want(t, 200).Str("refresh_token")
		env.Clock.Advance(time.Minute) // b's first token is now long rotated: its reuse would be theft
		secretA, liveB, rotatedB := strings.TrimPrefix(a.Refresh, sidA+"."), strings.TrimPrefix(nextB, sidB+"."), strings.TrimPrefix(b.Refresh, sidB+".")
		for _, tc := range []struct{ name, token string }{
			{"a's session, a guessed secret", sidA + "." + testenv.RandomHex(32)},
			{"a's session, b's live secret", sidA + "." + liveB},
			{"a's session, b's rotated secret", sidA + "." + rotatedB},
			{"b's session, b's rotated secret under a's id first", sidB + "." + sidA + "." + rotatedB},
			{"a's secret alone", secretA},
			{"a's session, no secret", sidA + "."},
			{"not a session id", "not-a-session." + secretA},
		} {
			t.Run(tc.name, func(t *testing.T) { env.Refresh(t, tc.token).Want(t, 401) })
		}
		env.Refresh(t, a.Refresh).Want(t, 200)
		env.Refresh(t, nextB).Want(t, 200)
	})
}

func TestSigninRefreshReuse(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		// rotate signs in and refreshes once: the rotated token and its
		// successor.
		rotate := func(t *testing.T) (old, newest string) {
			t.Helper()
			old = env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
			newest = env.Refresh(t, old).Want(t, 200).Str("refresh_token")
			return old, newest
		}
		t.Run("reuse within 10 seconds revokes nothing else", func(t *testing.T) {
			old, newest := rotate(t)
			env.Clock.Advance(10 * time.Second)
			env.Refresh(t, old).Want(t, 401)
			env.Refresh(t, newest).Want(t, 200)
		})
		t.Run("reuse after more than 10 seconds revokes the session", func(t *testing.T) {
			old, newest := rotate(t)
			other := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
			env.Clock.Advance(11 * time.Second)
			env.Refresh(t, old).Want(t, 401)
			env.Refresh(t, newest).Want(t, 401)
			// Only that session: another sign-in of the same user is untouched.
			env.Refresh(t, other).Want(t, 200)
		})
		t.Run("reuse of an older token after two rotations revokes the session", func(t *testing.T) {
			first, second := rotate(t)
			third := env.Refresh(t, second).Want(t, 200).Str("refresh_token")
			env.Clock.Advance(time.Minute)
			env.Refresh(t, first).Want(t, 401)
			env.Refresh(t, third).Want(t, 401)
		})
	})
}

func TestSigninRefreshExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		kept := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		idle := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		t.Run("usable just before 30 days", func(t *testing.T) {
			env.Clock.Advance(30*24*time.Hour - time.Minute)
			env.Refresh(t, kept).Want(t, 200)
		})
		t.Run("expired after 30 days and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			env.Refresh(t, idle).Want(t, 401)
		})
	})
}

func TestSigninLogout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		other := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		rotated := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		newest := env.Refresh(t, rotated).Want(t, 200).Str("refresh_token")
		const path = "/v1/auth/logout"
		env.RunCases(t, []testenv.Case{
			{Name: "session's refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": a.Refresh}, Want: 200,
				Check: testenv.WantMessage},
			{Name: "its refresh token no longer refreshes", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": a.Refresh},
				Want: 401},
			{Name: "same token twice", Method: "POST", Path: path, Body: map[string]string{"refresh_token": a.Refresh}, Want: 200,
				Check: testenv.WantMessage},
			{Name: "unknown token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": "nope-" + testenv.RandomHex(16)},
				Want: 200, Check: testenv.WantMessage},
			{Name: "empty refresh token", Method: "POST", Path: path, Body: map[string]string{"refresh_token": ""}, Want: 200,
				Check: testenv.WantMessage},
			{Name: "empty object", Method: "POST", Path: path, Body: map[string]string{}, Want: 200, Check: testenv.WantMessage},
			{Name: "without body", Method: "POST", Path: path, Want: 200, Check: testenv.WantMessage},
			{Name: "another session is untouched", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": other},
				Want: 200},
			{Name: "newest token of a rotated session", Method: "POST", Path: path, Body: map[string]string{"refresh_token": newest},
				Want: 200, Check: testenv.WantMessage},
			{Name: "rotated session's newest token no longer refreshes", Method: "POST", Path: "/v1/auth/refresh",
				Body: map[string]string{"refresh_token": newest}, Want: 401},
		})
	})
}

// The token a refresh mints is scoped to the session's default org while
// the user is still a member there; once that org is gone it falls back
// to the personal org, which becomes the default again.
func TestSigninRefreshDefaultOrgGone(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := teamOrgOf(t, env, a, false)
		switched := env.Call(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
		r := env.Refresh(t, a.Refresh).Want(t, 200)
		env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: team, OrgKind: "team"})
		env.Call(t, "DELETE", "/v1/orgs/"+team, switched.Str("access_token"), nil).Want(t, 200)
		r = env.Refresh(t, r.Str("refresh_token")).Want(t, 200)
		env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: a.OrgID, OrgKind: "personal"})
		r = env.Refresh(t, r.Str("refresh_token")).Want(t, 200)
		env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: a.OrgID, OrgKind: "personal"})
	})
}
