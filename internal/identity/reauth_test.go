package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// pastReauth is just past the default recent sign-in window.
const pastReauth = identity.ReauthWindow + time.Second

// wantSignInAgain checks the 403 of a sensitive change with a stale sign-in.
func wantSignInAgain(t *testing.T, r *testenv.Resp, action string) {
	t.Helper()
	r.Want(t, 403)
	if msg := r.Str("error"); !strings.HasPrefix(msg, "sign in again to "+action) {
		t.Errorf("error = %q; want it to start with %q", msg, "sign in again to "+action)
	}
}

// TestRecentSignIn: each sensitive change (ASVS 7.5.1, issue 13 item 8c)
// is refused 403 once the session's sign-in is older than the window, a
// refresh does not renew the sign-in, and a fresh sign-in allows it.
func TestRecentSignIn(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		type action struct {
			name, says string
			do         func(t *testing.T, a *testenv.Account, org, token string) *testenv.Resp
		}
		actions := []action{
			{"create a personal key", "create an API key", func(t *testing.T, a *testenv.Account, org, tok string) *testenv.Resp {
				return env.Call(t, "POST", "/v1/me/api-keys", tok, map[string]any{"name": "laptop"})
			}},
			{"create an org key", "create an API key", func(t *testing.T, a *testenv.Account, org, tok string) *testenv.Resp {
				return env.Call(t, "POST", "/v1/orgs/"+org+"/api-keys", tok, map[string]any{"name": "ci", "role": "member"})
			}},
			{"change the password", "change your password", func(t *testing.T, a *testenv.Account, org, tok string) *testenv.Resp {
				return env.Call(t, "POST", "/v1/me/password", tok, map[string]string{"current_password": a.Password, "new_password": a.Password + "-2"})
			}},
			{"end another session", "end another session", func(t *testing.T, a *testenv.Account, org, tok string) *testenv.Resp {
				other, _ := env.NewSession(t, a)
				return env.Call(t, "DELETE", "/v1/me/sessions/"+testenv.SID(t, other), tok, nil)
			}},
			{"delete the account", "delete your account", func(t *testing.T, a *testenv.Account, org, tok string) *testenv.Resp {
				return env.Call(t, "DELETE", "/v1/me", tok, nil)
			}},
		}
		for _, ac := range actions {
			t.Run(ac.name, func(t *testing.T) {
				a, org := env.Team(t)
				env.Clock.Advance(pastReauth)
				wantSignInAgain(t, ac.do(t, a, org, a.Access), ac.says)
				refreshed := env.Refresh(t, a.Refresh).Want(t, 200).Str("access_token")
				wantSignInAgain(t, ac.do(t, a, org, refreshed), ac.says)
				fresh, _ := env.NewSession(t, a)
				ac.do(t, a, org, fresh).Want(t, 200)
			})
		}
	})
}

// TestRecentSignInEdges: inside the window every action works; signing
// out one's own session needs no recent sign-in; setting a first password
// (a magic-link account) is a password change like any other.
func TestRecentSignInEdges(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.Clock.Advance(identity.ReauthWindow - time.Second)
		env.Do(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "laptop"}).Want(t, 200)
		env.Clock.Advance(2 * time.Second)
		env.Do(t, "DELETE", "/v1/me/sessions/"+testenv.SID(t, a.Access), a.Access, nil).Want(t, 200)

		email := testenv.Email()
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}).Want(t, 200)
		tok := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, email)}).Want(t, 200).Str("access_token")
		env.Clock.Advance(pastReauth)
		wantSignInAgain(t, env.Call(t, "POST", "/v1/me/password", tok, map[string]string{"new_password": "Harbor-" + testenv.RandomHex(6)}), "change your password")
	})
}

// TestSessionAbsoluteLifetime: refreshing keeps a session going 30 days
// past its last use, but never past 90 days after its sign-in (ASVS
// 7.3.2, issue 13 item 8b).
func TestSessionAbsoluteLifetime(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		refresh := a.Refresh
		for range 3 {
			env.Clock.Advance(29 * 24 * time.Hour)
			refresh = env.Refresh(t, refresh).Want(t, 200).Str("refresh_token")
		}
		// Day 87: the session ends on day 90, not on day 117.
		var expires int64
		if err := env.Store.DB().QueryRow(`SELECT expires_at FROM sessions WHERE id = $1`, testenv.SID(t, a.Access)).Scan(&expires); err != nil {
			t.Fatal(err)
		}
		if got, want := time.UnixMicro(expires).UTC(), env.Clock.Now().Add(3*24*time.Hour); !got.Equal(want) {
			t.Errorf("session expires_at = %v; want %v (90 days after sign-in)", got, want)
		}
		env.Clock.Advance(3*24*time.Hour - time.Second)
		refresh = env.Refresh(t, refresh).Want(t, 200).Str("refresh_token")
		env.Clock.Advance(time.Second)
		env.Refresh(t, refresh).Want(t, 401)
		env.Do(t, "GET", "/v1/me/sessions", a.Access, nil).Want(t, 401)
	})
}

// TestRecentSignInToFinishEnrolment: confirming a TOTP factor and
// finishing a passkey registration check the recent sign-in too (issue 23
// item 7), so an enrolment begun just inside the window cannot be
// finished long after it; the refusal changes nothing, and a fresh
// sign-in finishes a new enrolment.
func TestRecentSignInToFinishEnrolment(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.Clock.Advance(identity.ReauthWindow - time.Minute)
		e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
		auth := passkeytest.New(webOrigin, webRPID)
		o := passkeyBegin(t, env, "/v1/me/passkeys/begin", a.Access)
		_, att, err := auth.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(2 * time.Minute)
		confirm := "/v1/me/factors/" + e.Str("factor.id") + "/confirm"
		wantSignInAgain(t, env.Call(t, "POST", confirm, a.Access, map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}), "add a second factor")
		wantSignInAgain(t, env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, finishBody(o, att)), "add a passkey")
		if n := len(passkeys(t, env, a)); n != 0 {
			t.Errorf("%d passkeys after the refused finish; want 0", n)
		}
		if fs := env.Call(t, "GET", "/v1/me/factors", a.Access, nil).Want(t, 200).List(t, "factors"); len(fs) != 1 || fs[0]["confirmed"] != false {
			t.Errorf("factors after the refused confirmation = %v; want the one unconfirmed", fs)
		}

		fresh, _ := env.NewSession(t, a)
		e = env.Call(t, "POST", "/v1/me/factors/totp", fresh, nil).Want(t, 201)
		env.Clock.Advance(identity.ReauthWindow - time.Minute)
		env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", fresh, map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}).Want(t, 200)
	})
}
