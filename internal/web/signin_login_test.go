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
			signinCheckSession(t, env, r, signinSession{email: a.Email, name: a.Name, via: "password", userID: a.UserID, orgID: a.OrgID})
		}
		runSigninCases(t, env, []signinCase{
			{name: "right password", method: "POST", path: path, body: cred(a.Email, a.Password), wantStatus: 200, wantBody: session},
			{name: "email in upper case with spaces", method: "POST", path: path, body: cred("  "+strings.ToUpper(a.Email)+" ", a.Password),
				wantStatus: 200, wantBody: session},
			{name: "a stray bad bearer token is ignored", method: "POST", path: path, token: "garbage", body: cred(a.Email, a.Password),
				wantStatus: 200, wantBody: session},
			{name: "wrong password", method: "POST", path: path, body: cred(a.Email, a.Password+"x"), wantStatus: 401},
			{name: "another account's password", method: "POST", path: path, body: cred(a.Email, other.Password), wantStatus: 401},
			{name: "password in other case", method: "POST", path: path, body: cred(a.Email, strings.ToUpper(a.Password)), wantStatus: 401},
			{name: "unknown email", method: "POST", path: path, body: cred(testenv.Email(), a.Password), wantStatus: 401},
			{name: "malformed email", method: "POST", path: path, body: cred("not-an-email", a.Password), wantStatus: 401},
			{name: "missing email", method: "POST", path: path, body: map[string]any{"password": a.Password}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "missing password", method: "POST", path: path, body: map[string]any{"email": a.Email}, wantStatus: 400,
				wantBody: signinErrorNames("password")},
			{name: "empty password", method: "POST", path: path, body: cred(a.Email, ""), wantStatus: 400, wantBody: signinErrorNames("password")},
			{name: "password as a number", method: "POST", path: path, body: map[string]any{"email": a.Email, "password": 12345678},
				wantStatus: 400, wantBody: signinErrorNames("password")},
			{name: "malformed JSON", method: "POST", path: path, body: `{"email":`, wantStatus: 400},
			{name: "empty body", method: "POST", path: path, wantStatus: 400},
		})
		t.Run("wrong password and unknown email answer the same", func(t *testing.T) {
			wrong := signinLogin(t, env, a.Email, "not-the-password").Want(t, 401)
			unknown := signinLogin(t, env, testenv.Email(), "not-the-password").Want(t, 401)
			if !bytes.Equal(wrong.Body, unknown.Body) {
				t.Errorf("unknown email body = %s; want the wrong-password body %s", unknown.Body, wrong.Body)
			}
			if w, u := wrong.Header.Get("Content-Type"), unknown.Header.Get("Content-Type"); w != u {
				t.Errorf("unknown email Content-Type = %q; want %q as for a wrong password", u, w)
			}
		})
		t.Run("each login is a new session", func(t *testing.T) {
			r1 := signinLogin(t, env, a.Email, a.Password).Want(t, 200)
			r2 := signinLogin(t, env, a.Email, a.Password).Want(t, 200)
			if r1.Str("refresh_token") == r2.Str("refresh_token") {
				t.Errorf("two logins gave the same refresh token")
			}
			if s1, s2 := signinAccessClaims(t, r1.Str("access_token"))["sid"], signinAccessClaims(t, r2.Str("access_token"))["sid"]; s1 == s2 {
				t.Errorf("two logins gave the same sid %v", s1)
			}
		})
		t.Run("an account made by magic link has no password", func(t *testing.T) {
			email := testenv.Email()
			signinCall(t, env, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": signinMagicToken(t, env, email)}).Want(t, 200)
			for _, pw := range []string{"password-1", "12345678"} {
				signinLogin(t, env, email, pw).Want(t, 401)
			}
		})
	})
}
