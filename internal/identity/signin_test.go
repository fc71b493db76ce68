package identity_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninHealth(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		env.RunCases(t, []testenv.Case{
			{Name: "health answers a JSON object", Method: "GET", Path: "/health", Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
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
		env.RunCases(t, []testenv.Case{
			{Name: "new account answers 200 with a session", Method: "POST", Path: path, Body: reg(mixed, pw), Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: mixedNorm, Name: "Ada Lovelace", Via: "password"})
				}},
			{Name: "password of exactly 8 characters", Method: "POST", Path: path, Body: reg(eight, "k7#Qv2!x"), Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: eight, Name: "Ada Lovelace", Via: "password"})
				}},
			{Name: "name is optional", Method: "POST", Path: path, Body: map[string]any{"email": noName, "password": pw}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: noName, Via: "password"})
				}},
			{Name: "existing email", Method: "POST", Path: path, Body: reg(existing.Email, pw), Want: 409},
			{Name: "existing email in other case and with spaces", Method: "POST", Path: path,
				Body: reg(" "+strings.ToUpper(existing.Email)+"\t", pw), Want: 409},
			{Name: "just registered email in its normal form", Method: "POST", Path: path, Body: reg(mixedNorm, pw), Want: 409},
			{Name: "missing email", Method: "POST", Path: path, Body: map[string]any{"password": pw}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "empty email", Method: "POST", Path: path, Body: reg("", pw), Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "blank email", Method: "POST", Path: path, Body: reg("   ", pw), Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "missing password", Method: "POST", Path: path, Body: map[string]any{"email": testenv.Email()}, Want: 400,
				Check: testenv.ErrorNames("password")},
			{Name: "password of 7 characters", Method: "POST", Path: path, Body: reg(testenv.Email(), "1234567"), Want: 400,
				Check: testenv.ErrorNames("password")},
			{Name: "password over 1024 bytes", Method: "POST", Path: path, Body: reg(testenv.Email(), strings.Repeat("p", 1025)), Want: 400,
				Check: testenv.ErrorNames("password")},
			{Name: "email without at sign", Method: "POST", Path: path, Body: reg("plainaddress", pw), Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email without local part", Method: "POST", Path: path, Body: reg("@example.com", pw), Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email without domain", Method: "POST", Path: path, Body: reg("user@", pw), Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email with two at signs", Method: "POST", Path: path, Body: reg("user@@example.com", pw), Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email with a space inside", Method: "POST", Path: path, Body: reg("us er@example.com", pw), Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email with a display name", Method: "POST", Path: path, Body: reg("Ada <ada-"+testenv.RandomHex(3)+"@example.com>", pw),
				Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "email that is two addresses", Method: "POST", Path: path, Body: reg("a@example.com, b@example.com", pw),
				Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "email as a number", Method: "POST", Path: path, Body: map[string]any{"email": 5, "password": pw}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "password as a boolean", Method: "POST", Path: path, Body: map[string]any{"email": testenv.Email(), "password": true},
				Want: 400, Check: testenv.ErrorNames("password")},
			{Name: "name as an array", Method: "POST", Path: path, Body: map[string]any{"email": testenv.Email(), "password": pw, "name": []any{}},
				Want: 400, Check: testenv.ErrorNames("name")},
			{Name: "malformed JSON", Method: "POST", Path: path, Body: `{"email": "x@example.com", "password": `, Want: 400},
			{Name: "JSON array body", Method: "POST", Path: path, Body: `[{"email": "x@example.com", "password": "12345678"}]`, Want: 400},
			{Name: "JSON string body", Method: "POST", Path: path, Body: `"x@example.com"`, Want: 400},
			{Name: "two JSON objects", Method: "POST", Path: path,
				Body: `{"email": "` + testenv.Email() + `", "password": "12345678"} {"email": "x@example.com"}`, Want: 400},
			{Name: "empty body", Method: "POST", Path: path, Want: 400, Check: testenv.ErrorNames("email")},
		})
		t.Run("rejected bodies created no account", func(t *testing.T) {
			// The 7-character password was refused: its address is still free.
			email := testenv.Email()
			env.Call(t, "POST", path, "", reg(email, "1234567")).Want(t, 400)
			env.Call(t, "POST", path, "", reg(email, "k7#Qv2!x")).Want(t, 200)
		})
		t.Run("the registered password signs in", func(t *testing.T) {
			r := env.Login(t, mixedNorm, pw).Want(t, 200)
			env.CheckSession(t, r, testenv.Session{Email: mixedNorm, Name: "Ada Lovelace", Via: "password"})
		})
	})
}

func TestSigninRegisterConfirmationMail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"}).Want(t, 200)
		m := env.Mail.WaitFor(t, email, 5*time.Second)
		if !strings.Contains(m.Text, testenv.VerifyLink) {
			t.Fatalf("confirmation mail text:\n%s\nwant a link %s…", m.Text, testenv.VerifyLink)
		}
		tok := testenv.TokenFromLink(t, m.Text, testenv.VerifyLink)
		if strings.Contains(string(r.Body), tok) {
			t.Errorf("register answer %s contains the confirmation token; want it only in the mail", r.Body)
		}
		env.RunCases(t, []testenv.Case{
			{Name: "token from the mail verifies", Method: "POST", Path: "/v1/auth/verify-email", Body: map[string]string{"token": tok}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					if got := r.Get("user.email_verified"); got != true {
						t.Errorf("user.email_verified = %v; want true", got)
					}
				}},
			{Name: "token from the mail works once", Method: "POST", Path: "/v1/auth/verify-email", Body: map[string]string{"token": tok}, Want: 401},
		})
	})
}

func TestSigninRegisterMailFailure(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		env.Mail.SetFailing(true)
		email := testenv.Email()
		r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"})
		env.WaitMail(t) // the mail attempt has finished (and failed)
		env.Mail.SetFailing(false)
		if r.Status != 200 {
			t.Fatalf("register while mail fails: status = %d, body %s; want 200", r.Status, r.Body)
		}
		env.CheckSession(t, r, testenv.Session{Email: email, Via: "password"})
		if n := env.MailsTo(t, email); n != 0 {
			t.Fatalf("sink holds %d messages to %s; want 0 (it was failing)", n, email)
		}
		env.Call(t, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
		env.Login(t, email, "password-1").Want(t, 200)
	})
}

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
