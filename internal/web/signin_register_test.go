package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninHealth(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		runSigninCases(t, env, []signinCase{
			{name: "health answers a JSON object", method: "GET", path: "/health", wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
						t.Errorf("Content-Type = %q; want application/json", ct)
					}
					if r.JSON() == nil {
						t.Errorf("body %q; want a JSON object", r.Body)
					}
				}},
		})
	})
}

func TestSigninRegister(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		existing := env.Register(t)
		mixed := "  New.User-" + testenv.RandomHex(4) + "@Example.COM "
		mixedNorm := strings.ToLower(strings.TrimSpace(mixed))
		eight := testenv.Email()
		noName := testenv.Email()
		pw := "correct horse battery"
		reg := func(email, password string) map[string]any {
			return map[string]any{"email": email, "password": password, "name": "Ada Lovelace"}
		}
		const path = "/v1/auth/register"
		runSigninCases(t, env, []signinCase{
			{name: "new account answers 200 with a session", method: "POST", path: path, body: reg(mixed, pw), wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: mixedNorm, name: "Ada Lovelace", via: "password"})
				}},
			{name: "password of exactly 8 characters", method: "POST", path: path, body: reg(eight, "12345678"), wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: eight, name: "Ada Lovelace", via: "password"})
				}},
			{name: "name is optional", method: "POST", path: path, body: map[string]any{"email": noName, "password": pw}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: noName, via: "password"})
				}},
			{name: "existing email", method: "POST", path: path, body: reg(existing.Email, pw), wantStatus: 409},
			{name: "existing email in other case and with spaces", method: "POST", path: path,
				body: reg(" "+strings.ToUpper(existing.Email)+"\t", pw), wantStatus: 409},
			{name: "just registered email in its normal form", method: "POST", path: path, body: reg(mixedNorm, pw), wantStatus: 409},
			{name: "missing email", method: "POST", path: path, body: map[string]any{"password": pw}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "empty email", method: "POST", path: path, body: reg("", pw), wantStatus: 400, wantBody: signinErrorNames("email")},
			{name: "blank email", method: "POST", path: path, body: reg("   ", pw), wantStatus: 400, wantBody: signinErrorNames("email")},
			{name: "missing password", method: "POST", path: path, body: map[string]any{"email": testenv.Email()}, wantStatus: 400,
				wantBody: signinErrorNames("password")},
			{name: "password of 7 characters", method: "POST", path: path, body: reg(testenv.Email(), "1234567"), wantStatus: 400,
				wantBody: signinErrorNames("password")},
			{name: "password over 1024 bytes", method: "POST", path: path, body: reg(testenv.Email(), strings.Repeat("p", 1025)), wantStatus: 400,
				wantBody: signinErrorNames("password")},
			{name: "email without at sign", method: "POST", path: path, body: reg("plainaddress", pw), wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email without local part", method: "POST", path: path, body: reg("@example.com", pw), wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email without domain", method: "POST", path: path, body: reg("user@", pw), wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email with two at signs", method: "POST", path: path, body: reg("user@@example.com", pw), wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email with a space inside", method: "POST", path: path, body: reg("us er@example.com", pw), wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email with a display name", method: "POST", path: path, body: reg("Ada <ada-"+testenv.RandomHex(3)+"@example.com>", pw),
				wantStatus: 400, wantBody: signinErrorNames("email")},
			{name: "email that is two addresses", method: "POST", path: path, body: reg("a@example.com, b@example.com", pw),
				wantStatus: 400, wantBody: signinErrorNames("email")},
			{name: "email as a number", method: "POST", path: path, body: map[string]any{"email": 5, "password": pw}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "password as a boolean", method: "POST", path: path, body: map[string]any{"email": testenv.Email(), "password": true},
				wantStatus: 400, wantBody: signinErrorNames("password")},
			{name: "name as an array", method: "POST", path: path, body: map[string]any{"email": testenv.Email(), "password": pw, "name": []any{}},
				wantStatus: 400, wantBody: signinErrorNames("name")},
			{name: "malformed JSON", method: "POST", path: path, body: `{"email": "x@example.com", "password": `, wantStatus: 400},
			{name: "JSON array body", method: "POST", path: path, body: `[{"email": "x@example.com", "password": "12345678"}]`, wantStatus: 400},
			{name: "JSON string body", method: "POST", path: path, body: `"x@example.com"`, wantStatus: 400},
			{name: "two JSON objects", method: "POST", path: path,
				body: `{"email": "` + testenv.Email() + `", "password": "12345678"} {"email": "x@example.com"}`, wantStatus: 400},
			{name: "empty body", method: "POST", path: path, wantStatus: 400, wantBody: signinErrorNames("email")},
		})
		t.Run("rejected bodies created no account", func(t *testing.T) {
			// The 7-character password was refused: its address is still free.
			email := testenv.Email()
			signinCall(t, env, "POST", path, "", reg(email, "1234567")).Want(t, 400)
			signinCall(t, env, "POST", path, "", reg(email, "12345678")).Want(t, 200)
		})
		t.Run("the registered password signs in", func(t *testing.T) {
			r := signinLogin(t, env, mixedNorm, pw).Want(t, 200)
			signinCheckSession(t, env, r, signinSession{email: mixedNorm, name: "Ada Lovelace", via: "password"})
		})
	})
}

func TestSigninRegisterConfirmationMail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		r := signinCall(t, env, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"}).Want(t, 200)
		m := env.Mail.WaitFor(t, email, 5*time.Second)
		if !strings.Contains(m.Text, signinVerifyLink) {
			t.Fatalf("confirmation mail text:\n%s\nwant a link %s…", m.Text, signinVerifyLink)
		}
		tok := testenv.TokenFromLink(t, m.Text, signinVerifyLink)
		if strings.Contains(string(r.Body), tok) {
			t.Errorf("register answer %s contains the confirmation token; want it only in the mail", r.Body)
		}
		runSigninCases(t, env, []signinCase{
			{name: "token from the mail verifies", method: "POST", path: "/v1/auth/verify-email", body: map[string]string{"token": tok}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					if got := r.Get("user.email_verified"); got != true {
						t.Errorf("user.email_verified = %v; want true", got)
					}
				}},
			{name: "token from the mail works once", method: "POST", path: "/v1/auth/verify-email", body: map[string]string{"token": tok}, wantStatus: 401},
		})
	})
}

func TestSigninRegisterMailFailure(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		env.Mail.SetFailing(true)
		email := testenv.Email()
		r := signinCall(t, env, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"})
		env.Svc.Wait() // the mail attempt has finished (and failed)
		env.Mail.SetFailing(false)
		if r.Status != 200 {
			t.Fatalf("register while mail fails: status = %d, body %s; want 200", r.Status, r.Body)
		}
		signinCheckSession(t, env, r, signinSession{email: email, via: "password"})
		if n := signinMailsTo(env, email); n != 0 {
			t.Fatalf("sink holds %d messages to %s; want 0 (it was failing)", n, email)
		}
		signinCall(t, env, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
		signinLogin(t, env, email, "password-1").Want(t, 200)
	})
}
