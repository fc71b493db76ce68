package web_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestRegisterLoginMeRefreshLogout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200)
		if got := me.Str("user.email"); got != a.Email {
			t.Fatalf("me email = %q; want %q", got, a.Email)
		}
		login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		ref := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": login.Str("refresh_token")}).Want(t, 200)
		env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": ref.Str("refresh_token")}).Want(t, 200)
		env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": ref.Str("refresh_token")}).Want(t, 401)
		m := env.Mail.WaitFor(t, a.Email, 5e9)
		tok := testenv.TokenFromLink(t, m.Text, "http://web.test/verify-email?token=")
		v := env.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)
		if v.Get("user.email_verified") != true {
			t.Fatalf("email_verified after verify = %v", v.Get("user.email_verified"))
		}
	})
}
