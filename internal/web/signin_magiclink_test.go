package web_test

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
				signinWantMessage(t, r)
				if tok := signinMailToken(t, env, email, prefix); tok == "" {
					t.Errorf("magic link to %s has an empty token", email)
				}
			}
		}
		unknown, web, mobile, desktop, omitted, upper := testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email(), testenv.Email()
		runSigninCases(t, env, []signinCase{
			{name: "known email", method: "POST", path: path, body: map[string]any{"email": known.Email}, wantStatus: 200,
				wantBody: linkTo(known.Email, signinWebMagic)},
			{name: "unknown email", method: "POST", path: path, body: map[string]any{"email": unknown}, wantStatus: 200,
				wantBody: linkTo(unknown, signinWebMagic)},
			{name: "client web", method: "POST", path: path, body: map[string]any{"email": web, "client": "web"}, wantStatus: 200,
				wantBody: linkTo(web, signinWebMagic)},
			{name: "client mobile", method: "POST", path: path, body: map[string]any{"email": mobile, "client": "mobile"}, wantStatus: 200,
				wantBody: linkTo(mobile, signinMobMagic)},
			{name: "client other", method: "POST", path: path, body: map[string]any{"email": desktop, "client": "desktop"}, wantStatus: 200,
				wantBody: linkTo(desktop, signinWebMagic)},
			{name: "client omitted", method: "POST", path: path, body: map[string]any{"email": omitted}, wantStatus: 200,
				wantBody: linkTo(omitted, signinWebMagic)},
			{name: "email in upper case with spaces", method: "POST", path: path, body: map[string]any{"email": " " + strings.ToUpper(upper) + " "},
				wantStatus: 200, wantBody: linkTo(upper, signinWebMagic)},
			{name: "missing email", method: "POST", path: path, body: map[string]any{"client": "web"}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "empty email", method: "POST", path: path, body: map[string]any{"email": ""}, wantStatus: 400, wantBody: signinErrorNames("email")},
			{name: "invalid email", method: "POST", path: path, body: map[string]any{"email": "not-an-email"}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email without domain", method: "POST", path: path, body: map[string]any{"email": "user@"}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "email as a number", method: "POST", path: path, body: map[string]any{"email": 5}, wantStatus: 400,
				wantBody: signinErrorNames("email")},
			{name: "malformed JSON", method: "POST", path: path, body: `{"email"`, wantStatus: 400},
			{name: "empty body", method: "POST", path: path, wantStatus: 400, wantBody: signinErrorNames("email")},
		})
		t.Run("mobile link is not also a web link", func(t *testing.T) {
			for _, m := range env.Mail.Messages() {
				if len(m.To) > 0 && strings.EqualFold(m.To[0], mobile) && strings.Contains(m.Text, signinWebMagic) {
					t.Errorf("mobile magic-link mail holds a web link:\n%s", m.Text)
				}
			}
		})
		t.Run("answer is the same for known and unknown addresses", func(t *testing.T) {
			k := signinCall(t, env, "POST", path, "", map[string]any{"email": known.Email}).Want(t, 200)
			u := signinCall(t, env, "POST", path, "", map[string]any{"email": testenv.Email()}).Want(t, 200)
			if string(k.Body) != string(u.Body) {
				t.Errorf("unknown address answer %s; want the known address answer %s", u.Body, k.Body)
			}
		})
		t.Run("mail failure does not fail the request", func(t *testing.T) {
			env.Mail.SetFailing(true)
			email := testenv.Email()
			r := signinCall(t, env, "POST", path, "", map[string]any{"email": email})
			env.Svc.Wait()
			env.Mail.SetFailing(false)
			if r.Status != 200 {
				t.Fatalf("magic link while mail fails: status = %d, body %s; want 200", r.Status, r.Body)
			}
			if n := signinMailsTo(env, email); n != 0 {
				t.Errorf("sink holds %d messages to %s; want 0 (it was failing)", n, email)
			}
		})
	})
}

func TestSigninMagicLinkVerify(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		newAddr := testenv.Email()
		newTok := signinMagicToken(t, env, newAddr)
		known := env.Register(t)
		knownTok := signinMagicToken(t, env, known.Email)
		mobileAddr := testenv.Email()
		signinCall(t, env, "POST", "/v1/auth/magic-link", "", map[string]any{"email": mobileAddr, "client": "mobile"}).Want(t, 200)
		mobileTok := signinMailToken(t, env, mobileAddr, signinMobMagic)
		confirmTok := signinMailToken(t, env, known.Email, signinVerifyLink)
		const path = "/v1/auth/magic-link/verify"
		var newUserID string
		runSigninCases(t, env, []signinCase{
			{name: "unknown address becomes a verified account", method: "POST", path: path, body: map[string]string{"token": newTok}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: newAddr, verified: true, via: "magic_link"})
					newUserID = r.Str("user.id")
				}},
			{name: "second use", method: "POST", path: path, body: map[string]string{"token": newTok}, wantStatus: 401},
			{name: "known address signs in to its account", method: "POST", path: path, body: map[string]string{"token": knownTok}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					// Opening the link proves the address (docs/decisions.md).
					signinCheckSession(t, env, r, signinSession{email: known.Email, name: known.Name, verified: true, via: "magic_link",
						userID: known.UserID, orgID: known.OrgID})
				}},
			{name: "mobile link token verifies", method: "POST", path: path, body: map[string]string{"token": mobileTok}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					signinCheckSession(t, env, r, signinSession{email: mobileAddr, verified: true, via: "magic_link"})
				}},
			{name: "unknown token", method: "POST", path: path, body: map[string]string{"token": "not-a-token-" + testenv.RandomHex(8)}, wantStatus: 401},
			{name: "email confirmation token", method: "POST", path: path, body: map[string]string{"token": confirmTok}, wantStatus: 401},
			{name: "missing token", method: "POST", path: path, body: map[string]string{}, wantStatus: 400, wantBody: signinErrorNames("token")},
			{name: "empty token", method: "POST", path: path, body: map[string]string{"token": ""}, wantStatus: 400, wantBody: signinErrorNames("token")},
			{name: "token as a number", method: "POST", path: path, body: map[string]any{"token": 42}, wantStatus: 400, wantBody: signinErrorNames("token")},
			{name: "empty body", method: "POST", path: path, wantStatus: 400, wantBody: signinErrorNames("token")},
		})
		t.Run("new account reads back verified", func(t *testing.T) {
			tok := signinMagicToken(t, env, newAddr)
			r := signinCall(t, env, "POST", path, "", map[string]string{"token": tok}).Want(t, 200)
			if got := r.Str("user.id"); got != newUserID {
				t.Errorf("second magic link for %s: user.id = %q; want the account made by the first, %q", newAddr, got, newUserID)
			}
			me := signinCall(t, env, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
			if got := me.Get("user.email_verified"); got != true {
				t.Errorf("me user.email_verified = %v; want true", got)
			}
		})
		t.Run("confirmation token still works after the magic link", func(t *testing.T) {
			// The magic link was not the confirmation token: that one is unused.
			signinCall(t, env, "POST", "/v1/auth/verify-email", "", map[string]string{"token": confirmTok}).Want(t, 200)
		})
	})
}

func TestSigninMagicLinkExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		early, late := testenv.Email(), testenv.Email()
		earlyTok := signinMagicToken(t, env, early)
		lateTok := signinMagicToken(t, env, late)
		const path = "/v1/auth/magic-link/verify"
		t.Run("usable after 14 minutes", func(t *testing.T) {
			env.Clock.Advance(14 * time.Minute)
			signinCall(t, env, "POST", path, "", map[string]string{"token": earlyTok}).Want(t, 200)
		})
		t.Run("expired after 15 minutes and 1 second", func(t *testing.T) {
			env.Clock.Advance(time.Minute + time.Second)
			signinCall(t, env, "POST", path, "", map[string]string{"token": lateTok}).Want(t, 401)
		})
		t.Run("a new link works again", func(t *testing.T) {
			signinCall(t, env, "POST", path, "", map[string]string{"token": signinMagicToken(t, env, late)}).Want(t, 200)
		})
	})
}
