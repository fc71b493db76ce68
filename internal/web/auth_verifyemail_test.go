package web_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninVerifyEmail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := env.MailToken(t, a.Email, testenv.VerifyLink)
		magicTok := env.MagicToken(t, testenv.Email())
		const path = "/v1/auth/verify-email"
		env.RunCases(t, []testenv.Case{
			{Name: "confirmation token", Method: "POST", Path: path, Body: map[string]string{"token": tok}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					testenv.WantMessage(t, r)
					u, _ := r.Get("user").(map[string]any)
					testenv.CheckUser(t, u, a.Email, a.Name, true)
					if u != nil && u["id"] != a.UserID {
						t.Errorf("user.id = %v; want %s", u["id"], a.UserID)
					}
				}},
			{Name: "second use", Method: "POST", Path: path, Body: map[string]string{"token": tok}, Want: 401},
			{Name: "me shows the address verified", Method: "GET", Path: "/v1/auth/me", Token: a.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					if got := r.Get("user.email_verified"); got != true {
						t.Errorf("me user.email_verified = %v; want true", got)
					}
				}},
			{Name: "unknown token", Method: "POST", Path: path, Body: map[string]string{"token": "nope-" + testenv.RandomHex(16)}, Want: 401},
			{Name: "magic-link token", Method: "POST", Path: path, Body: map[string]string{"token": magicTok}, Want: 401},
			{Name: "missing token", Method: "POST", Path: path, Body: map[string]string{}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "empty token", Method: "POST", Path: path, Body: map[string]string{"token": ""}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "token as an object", Method: "POST", Path: path, Body: map[string]any{"token": map[string]any{}}, Want: 400,
				Check: testenv.ErrorNames("token")},
			{Name: "empty body", Method: "POST", Path: path, Want: 400, Check: testenv.ErrorNames("token")},
		})
		t.Run("magic-link token is still usable for sign-in", func(t *testing.T) {
			// Presenting it at verify-email did not consume it.
			env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": magicTok}).Want(t, 200)
		})
	})
}

func TestSigninVerifyEmailExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		early, late := env.Register(t), env.Register(t)
		earlyTok := env.MailToken(t, early.Email, testenv.VerifyLink)
		lateTok := env.MailToken(t, late.Email, testenv.VerifyLink)
		const path = "/v1/auth/verify-email"
		t.Run("usable after 23 hours 59 minutes", func(t *testing.T) {
			env.Clock.Advance(24*time.Hour - time.Minute)
			env.Call(t, "POST", path, "", map[string]string{"token": earlyTok}).Want(t, 200)
		})
		t.Run("expired after 24 hours and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			env.Call(t, "POST", path, "", map[string]string{"token": lateTok}).Want(t, 401)
		})
		t.Run("expired link leaves the address unverified", func(t *testing.T) {
			r := env.Login(t, late.Email, late.Password).Want(t, 200)
			if got := r.Get("user.email_verified"); got != false {
				t.Errorf("user.email_verified = %v; want false", got)
			}
		})
	})
}
