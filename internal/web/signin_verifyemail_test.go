package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninVerifyEmail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := signinMailToken(t, env, a.Email, signinVerifyLink)
		magicTok := signinMagicToken(t, env, testenv.Email())
		const path = "/v1/auth/verify-email"
		runSigninCases(t, env, []signinCase{
			{name: "confirmation token", method: "POST", path: path, body: map[string]string{"token": tok}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinWantMessage(t, r)
					u, _ := r.Get("user").(map[string]any)
					signinCheckUser(t, u, a.Email, a.Name, true)
					if u != nil && u["id"] != a.UserID {
						t.Errorf("user.id = %v; want %s", u["id"], a.UserID)
					}
				}},
			{name: "second use", method: "POST", path: path, body: map[string]string{"token": tok}, wantStatus: 401},
			{name: "me shows the address verified", method: "GET", path: "/v1/auth/me", token: a.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					if got := r.Get("user.email_verified"); got != true {
						t.Errorf("me user.email_verified = %v; want true", got)
					}
				}},
			{name: "unknown token", method: "POST", path: path, body: map[string]string{"token": "nope-" + testenv.RandomHex(16)}, wantStatus: 401},
			{name: "magic-link token", method: "POST", path: path, body: map[string]string{"token": magicTok}, wantStatus: 401},
			{name: "missing token", method: "POST", path: path, body: map[string]string{}, wantStatus: 400, wantBody: signinErrorNames("token")},
			{name: "empty token", method: "POST", path: path, body: map[string]string{"token": ""}, wantStatus: 400, wantBody: signinErrorNames("token")},
			{name: "token as an object", method: "POST", path: path, body: map[string]any{"token": map[string]any{}}, wantStatus: 400,
				wantBody: signinErrorNames("token")},
			{name: "empty body", method: "POST", path: path, wantStatus: 400, wantBody: signinErrorNames("token")},
		})
		t.Run("magic-link token is still usable for sign-in", func(t *testing.T) {
			// Presenting it at verify-email did not consume it.
			signinCall(t, env, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": magicTok}).Want(t, 200)
		})
	})
}

func TestSigninVerifyEmailExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		early, late := env.Register(t), env.Register(t)
		earlyTok := signinMailToken(t, env, early.Email, signinVerifyLink)
		lateTok := signinMailToken(t, env, late.Email, signinVerifyLink)
		const path = "/v1/auth/verify-email"
		t.Run("usable after 23 hours 59 minutes", func(t *testing.T) {
			env.Clock.Advance(24*time.Hour - time.Minute)
			signinCall(t, env, "POST", path, "", map[string]string{"token": earlyTok}).Want(t, 200)
		})
		t.Run("expired after 24 hours and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			signinCall(t, env, "POST", path, "", map[string]string{"token": lateTok}).Want(t, 401)
		})
		t.Run("expired link leaves the address unverified", func(t *testing.T) {
			r := signinLogin(t, env, late.Email, late.Password).Want(t, 200)
			if got := r.Get("user.email_verified"); got != false {
				t.Errorf("user.email_verified = %v; want false", got)
			}
		})
	})
}
