package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninMagicLinkRequest(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		known := env.Register(t)
		const path = "/v1/auth/magic-link"
		// linkTo checks the 200 {message} and that the mail to email carries
		// a link with prefix.
		linkTo := func(email, prefix string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				testenv.WantMessage(t, r)
				if tok := env.MailToken(t, email, prefix); tok == "" {
					t.Errorf("magic link to %s has an empty token", email)
				}
			}
		}
		unknown, web, mobile, desktop, omitted, upper := testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email()
		env.RunCases(t, []testenv.Case{
			{Name: "known email", Method: "POST", Path: path, Body: map[string]any{"email": known.Email}, Want: 200,
				Check: linkTo(known.Email, testenv.MagicLink)},
			{Name: "unknown email", Method: "POST", Path: path, Body: map[string]any{"email": unknown}, Want: 200,
				Check: linkTo(unknown, testenv.MagicLink)},
			{Name: "client web", Method: "POST", Path: path, Body: map[string]any{"email": web, "client": "web"}, Want: 200,
				Check: linkTo(web, testenv.MagicLink)},
			{Name: "client mobile", Method: "POST", Path: path, Body: map[string]any{"email": mobile, "client": "mobile"}, Want: 200,
				Check: linkTo(mobile, testenv.MobileMagicLink)},
			{Name: "client other", Method: "POST", Path: path, Body: map[string]any{"email": desktop, "client": "desktop"}, Want: 200,
				Check: linkTo(desktop, testenv.MagicLink)},
			{Name: "client omitted", Method: "POST", Path: path, Body: map[string]any{"email": omitted}, Want: 200,
				Check: linkTo(omitted, testenv.MagicLink)},
			{Name: "email in upper case with spaces", Method: "POST", Path: path, Body: map[string]any{"email": " " + strings.ToUpper(upper) + " "},
				Want: 200, Check: linkTo(upper, testenv.MagicLink)},
			{Name: "missing email", Method: "POST", Path: path, Body: map[string]any{"client": "web"}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "empty email", Method: "POST", Path: path, Body: map[string]any{"email": ""}, Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "invalid email", Method: "POST", Path: path, Body: map[string]any{"email": "not-an-email"}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email without domain", Method: "POST", Path: path, Body: map[string]any{"email": "user@"}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "email as a number", Method: "POST", Path: path, Body: map[string]any{"email": 5}, Want: 400,
				Check: testenv.ErrorNames("email")},
			{Name: "malformed JSON", Method: "POST", Path: path, Body: `{"email"`, Want: 400},
			{Name: "empty body", Method: "POST", Path: path, Want: 400, Check: testenv.ErrorNames("email")},
		})
		t.Run("mobile link is not also a web link", func(t *testing.T) {
			for _, m := range env.Mail.Messages() {
				if len(m.To) > 0 && strings.EqualFold(m.To[0], mobile) && strings.Contains(m.Text, testenv.MagicLink) {
					t.Errorf("mobile magic-link mail holds a web link:\n%s", m.Text)
				}
			}
		})
		t.Run("answer is the same for known and unknown addresses", func(t *testing.T) {
			k := env.Call(t, "POST", path, "", map[string]any{"email": known.Email}).Want(t, 200)
			u := env.Call(t, "POST", path, "", map[string]any{"email": testenv.Email()}).Want(t, 200)
			if string(k.Body) != string(u.Body) {
				t.Errorf("unknown address answer %s; want the known address answer %s", u.Body, k.Body)
			}
		})
		t.Run("mail failure does not fail the request", func(t *testing.T) {
			env.Mail.SetFailing(true)
			email := testenv.Email()
			r := env.Call(t, "POST", path, "", map[string]any{"email": email})
			env.WaitMail(t)
			env.Mail.SetFailing(false)
			if r.Status != 200 {
				t.Fatalf("magic link while mail fails: status = %d, body %s; want 200", r.Status, r.Body)
			}
			if n := env.MailsTo(t, email); n != 0 {
				t.Errorf("sink holds %d messages to %s; want 0 (it was failing)", n, email)
			}
		})
	})
}

func TestSigninMagicLinkVerify(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		newAddr := testenv.Email()
		newTok := env.MagicToken(t, newAddr)
		known := env.Register(t)
		knownTok := env.MagicToken(t, known.Email)
		mobileAddr := testenv.Email()
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]any{"email": mobileAddr, "client": "mobile"}).Want(t, 200)
		mobileTok := env.MailToken(t, mobileAddr, testenv.MobileMagicLink)
		confirmTok := env.MailToken(t, known.Email, testenv.VerifyLink)
		const path = "/v1/auth/magic-link/verify"
		var newUserID string
		env.RunCases(t, []testenv.Case{
			{Name: "unknown address becomes a verified account", Method: "POST", Path: path, Body: map[string]string{"token": newTok}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: newAddr, Verified: true, Via: "magic_link"})
					newUserID = r.Str("user.id")
				}},
			{Name: "second use", Method: "POST", Path: path, Body: map[string]string{"token": newTok}, Want: 401},
			{Name: "known address signs in to its account", Method: "POST", Path: path, Body: map[string]string{"token": knownTok}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					// Opening the link proves the address (docs/decisions.md).
					env.CheckSession(t, r, testenv.Session{Email: known.Email, Name: known.Name, Verified: true, Via: "magic_link",
						UserID: known.UserID, OrgID: known.OrgID})
				}},
			{Name: "mobile link token verifies", Method: "POST", Path: path, Body: map[string]string{"token": mobileTok}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					env.CheckSession(t, r, testenv.Session{Email: mobileAddr, Verified: true, Via: "magic_link"})
				}},
			{Name: "unknown token", Method: "POST", Path: path, Body: map[string]string{"token": "not-a-token-" + testenv.RandomHex(8)}, Want: 401},
			{Name: "email confirmation token", Method: "POST", Path: path, Body: map[string]string{"token": confirmTok}, Want: 401},
			{Name: "missing token", Method: "POST", Path: path, Body: map[string]string{}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "empty token", Method: "POST", Path: path, Body: map[string]string{"token": ""}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "token as a number", Method: "POST", Path: path, Body: map[string]any{"token": 42}, Want: 400, Check: testenv.ErrorNames("token")},
			{Name: "empty body", Method: "POST", Path: path, Want: 400, Check: testenv.ErrorNames("token")},
		})
		t.Run("new account reads back verified", func(t *testing.T) {
			tok := env.MagicToken(t, newAddr)
			r := env.Call(t, "POST", path, "", map[string]string{"token": tok}).Want(t, 200)
			if got := r.Str("user.id"); got != newUserID {
				t.Errorf("second magic link for %s: user.id = %q; want the account made by the first, %q", newAddr, got, newUserID)
			}
			me := env.Call(t, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
			if got := me.Get("user.email_verified"); got != true {
				t.Errorf("me user.email_verified = %v; want true", got)
			}
		})
		t.Run("confirmation token still works after the magic link", func(t *testing.T) {
			// The magic link was not the confirmation token: that one is unused.
			env.Call(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": confirmTok}).Want(t, 200)
		})
	})
}

func TestSigninMagicLinkExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		early, late := testenv.Email(), testenv.Email()
		earlyTok := env.MagicToken(t, early)
		lateTok := env.MagicToken(t, late)
		const path = "/v1/auth/magic-link/verify"
		t.Run("usable after 14 minutes", func(t *testing.T) {
			env.Clock.Advance(14 * time.Minute)
			env.Call(t, "POST", path, "", map[string]string{"token": earlyTok}).Want(t, 200)
		})
		t.Run("expired after 15 minutes and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			env.Call(t, "POST", path, "", map[string]string{"token": lateTok}).Want(t, 401)
		})
		t.Run("a new link works again", func(t *testing.T) {
			env.Call(t, "POST", path, "", map[string]string{"token": env.MagicToken(t, late)}).Want(t, 200)
		})
	})
}
