package web_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninLogin(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		other := env.Register(t)
		const path = "/v1/auth/login"
		cred := func(email, password string) map[string]any {
			return map[string]any{"email": email, "password": password}
		}
		session := func(t *testing.T, r *testenv.Resp) {
			env.CheckSession(t, r, testenv.Session{Email: a.Email, Name: a.Name, Via: "password", UserID: a.UserID, OrgID: a.OrgID})
		}
		env.RunCases(t, []testenv.Case{
			{Name: "right password", Method: "POST", Path: path, Body: cred(a.Email, a.Password), Want: 200, Check: session},
			{Name: "email in upper case with spaces", Method: "POST", Path: path, Body: cred("  "+strings.ToUpper(a.Email)+" ", a.Password),
				Want: 200, Check: session},
			{Name: "a stray bad bearer token is ignored", Method: "POST", Path: path, Token: "garbage", Body: cred(a.Email, a.Password),
				Want: 200, Check: session},
			{Name: "wrong password", Method: "POST", Path: path, Body: cred(a.Email, a.Password+"x"), Want: 401},
			{Name: "another account's password", Method: "POST", Path: path, Body: cred(a.Email, other.Password), Want: 401},
			{Name: "password in other case", Method: "POST", Path: path, Body: cred(a.Email, strings.ToUpper(a.Password)), Want: 401},
			{Name: "unknown email", Method: "POST", Path: path, Body: cred(testenv.Email(), a.Password), Want: 401},
			{Name: "malformed email", Method: "POST", Path: path, Body: cred("not-an-email", a.Password), Want: 401},
			{Name: "missing email", Method: "POST", Path: path, Body: map[string]any{"password": a.Password}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "missing password", Method: "POST", Path: path, Body: map[string]any{"email": a.Email}, Want: 400,
				Check: testenv.ErrorNames("password")},
			{Name: "empty password", Method: "POST", Path: path, Body: cred(a.Email, ""), Want: 400, Check: testenv.ErrorNames("password")},
			{Name: "password as a number", Method: "POST", Path: path, Body: map[string]any{"email": a.Email, "password": 12345678},
				Want: 400, Check: testenv.ErrorNames("password")},
			{Name: "malformed JSON", Method: "POST", Path: path, Body: `{"email":`, Want: 400},
			{Name: "empty body", Method: "POST", Path: path, Want: 400},
		})
		t.Run("wrong password and unknown email answer the same", func(t *testing.T) {
			wrong := env.Login(t, a.Email, "not-the-password").Want(t, 401)
			unknown := env.Login(t, testenv.Email(), "not-the-password").Want(t, 401)
			if !bytes.Equal(wrong.Body, unknown.Body) {
				t.Errorf("unknown email body = %s; want the wrong-password body %s", unknown.Body, wrong.Body)
			}
			if w, u := wrong.Header.Get("Content-Type"), unknown.Header.Get("Content-Type"); w != u {
				t.Errorf("unknown email Content-Type = %q; want %q as for a wrong password", u, w)
			}
		})
		t.Run("each login is a new session", func(t *testing.T) {
			r1 := env.Login(t, a.Email, a.Password).Want(t, 200)
			r2 := env.Login(t, a.Email, a.Password).Want(t, 200)
			if r1.Str("refresh_token") == r2.Str("refresh_token") {
				t.Errorf("two logins gave the same refresh token")
			}
			if s1, s2 := testenv.Claims(t, r1.Str("access_token"))["sid"], testenv.Claims(t, r2.Str("access_token"))["sid"]; s1 == s2 {
				t.Errorf("two logins gave the same sid %v", s1)
			}
		})
		t.Run("an account made by magic link has no password", func(t *testing.T) {
			email := testenv.Email()
			env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, email)}).Want(t, 200)
			for _, pw := range []string{"password-1", "12345678"} {
				env.Login(t, email, pw).Want(t, 401)
			}
		})
	})
}
