package identity_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestAccessTokenSessionEnd: an access token never outlives its session's
// absolute lifetime (GATEHOUSE_SESSION_MAX_AGE, issue 23 item 7): with a
// lifetime of 30 minutes, shorter than a token's hour, the tokens of
// sign-up, sign-in, refresh, switch-org, a new workspace, the TOTP
// confirmation and the second-factor step all expire by the session's
// end, and the session's expiry is the token's.
func TestAccessTokenSessionEnd(t *testing.T) {
	const maxAge = 30 * time.Minute
	testenv.RunWith(t, testenv.Options{SessionMaxAge: maxAge}, func(t *testing.T, env *testenv.Env) {
		// wantExp checks tok's exp claim and the answer's expires_at.
		wantExp := func(t *testing.T, what string, r *testenv.Resp, want time.Time) {
			t.Helper()
			exp := time.Unix(int64(testenv.Claims(t, r.Str("access_token"))["exp"].(float64)), 0).UTC()
			if !exp.Equal(want) {
				t.Errorf("%s: token exp %v; want %v (the session's end)", what, exp, want)
			}
			env.CheckExpiry(t, r.Str("expires_at"), want.Sub(env.Clock.Now()))
		}
		start := env.Clock.Now()
		end := start.Add(maxAge)
		a := env.Register(t)
		login := env.Login(t, a.Email, a.Password).Want(t, 200)
		wantExp(t, "sign-in", login, end)

		env.Clock.Advance(10 * time.Minute)
		refreshed := env.Refresh(t, login.Str("refresh_token")).Want(t, 200)
		wantExp(t, "refresh", refreshed, end)
		tok := refreshed.Str("access_token")
		wantExp(t, "switch-org", env.Call(t, "POST", "/v1/auth/switch-org", tok, map[string]string{"org_id": a.OrgID}).Want(t, 200), end)
		wantExp(t, "new workspace", env.Call(t, "POST", "/v1/orgs", tok, map[string]string{"name": "Short Lived"}).Want(t, 200), end)

		e := env.Call(t, "POST", "/v1/me/factors/totp", tok, nil).Want(t, 201)
		confirmed := env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", tok, map[string]string{"code": totpAt(t, env, e.Str("secret"), 0)}).Want(t, 200)
		wantExp(t, "TOTP confirmation", confirmed, end)

		env.Clock.Advance(time.Minute)
		pending := env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
		stepped := env.Call(t, "POST", "/v1/auth/mfa", pending, step("totp", totpAt(t, env, e.Str("secret"), 0))).Want(t, 200)
		wantExp(t, "second-factor step", stepped, env.Clock.Now().Add(maxAge))

		// Past the end, the session's refresh is refused and its token too.
		env.Clock.Advance(maxAge)
		env.Refresh(t, stepped.Str("refresh_token")).Want(t, 401)
		env.Call(t, "GET", "/v1/auth/me", stepped.Str("access_token"), nil).Want(t, 401)
	})
}
