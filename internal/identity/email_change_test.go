package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The links of the email change mails (testenv's web base).
const (
	changeLink = "http://web.test" + identity.ChangeEmailPath + "?token="
	undoLink   = "http://web.test" + identity.UndoEmailPath + "?token="
)

// askEmailChange asks for a's move to email and returns the mailed token.
func askEmailChange(t *testing.T, env *testenv.Env, a *testenv.Account, email string) string {
	t.Helper()
	before := len(env.MailTexts(email, changeLink))
	env.Call(t, "POST", "/v1/me/email", a.Access, map[string]string{"email": email}).Want(t, 202)
	return env.WaitMailToken(t, email, changeLink, before+1)
}

// meEmail is the address GET /v1/auth/me answers for token.
func meEmail(t *testing.T, env *testenv.Env, token string) string {
	t.Helper()
	return env.Call(t, "GET", "/v1/auth/me", token, nil).Want(t, 200).Str("user.email")
}

// TestEmailChange: the account keeps its address until the link mailed to
// the new one is opened; then it signs in with the new address, the old
// one no longer, its sessions stay, the old address gets a notice with an
// undo link, the link works once, and both steps are audited.
func TestEmailChange(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		next := testenv.Email()
		tok := askEmailChange(t, env, a, strings.ToUpper(next))
		if got := meEmail(t, env, a.Access); got != a.Email {
			t.Errorf("address before the link is opened = %q; want the old %q", got, a.Email)
		}
		env.Login(t, next, a.Password).Want(t, 401)

		r := env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": tok}).Want(t, 200)
		testenv.CheckUser(t, r.Obj(t, "user"), next, a.Name, true)
		if got := meEmail(t, env, a.Access); got != next {
			t.Errorf("address after the link = %q; want %q (and the session kept)", got, next)
		}
		env.Refresh(t, a.Refresh).Want(t, 200)
		env.Login(t, next, a.Password).Want(t, 200)
		env.Login(t, a.Email, a.Password).Want(t, 401)

		t.Run("replayed link", func(t *testing.T) {
			env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": tok}).Want(t, 401)
		})
		t.Run("notice to the old address", func(t *testing.T) {
			env.WaitMail(t) // the notice is a mail job
			texts := env.MailTexts(a.Email, undoLink)
			if len(texts) != 1 || !strings.Contains(texts[0], next) {
				t.Fatalf("notices to the old address = %q; want one naming %s with an undo link", texts, next)
			}
		})
		t.Run("audit", func(t *testing.T) {
			for _, action := range []string{"identity.user.email_change_requested", "identity.user.email_changed"} {
				if got := env.StoredAudit(t, a.OrgID, action); len(got) != 1 || got[0]["actor_id"] != a.UserID {
					t.Errorf("%s entries = %v; want one by %s", action, got, a.UserID)
				}
			}
		})
	})
}

// TestEmailChangeRefused: an address another account holds (however
// spelled), one's own address, a malformed one, a stale sign-in (a stolen
// session) and a second request within the minute are refused, and no
// link goes out for them. A later request replaces the earlier link.
func TestEmailChangeRefused(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		const path = "/v1/me/email"
		body := func(email string) map[string]string { return map[string]string{"email": email} }
		env.RunCases(t, []testenv.Case{
			{Name: "address of another account", Method: "POST", Path: path, Token: a.Access, Body: body(other.Email), Want: 409, Check: testenv.ErrorNames("another account")},
			{Name: "address of another account in upper case", Method: "POST", Path: path, Token: a.Access, Body: body(" " + strings.ToUpper(other.Email)), Want: 409},
			{Name: "own address", Method: "POST", Path: path, Token: a.Access, Body: body(a.Email), Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "malformed", Method: "POST", Path: path, Token: a.Access, Body: body("not-an-address"), Want: 400, Check: testenv.ErrorNames("email")},
			{Name: "no token", Method: "POST", Path: path, Body: body(testenv.Email()), Want: 401},
		})
		env.WaitMail(t) // none queued either
		if n := len(env.MailTexts(other.Email, changeLink)); n != 0 {
			t.Errorf("%d change links mailed to another account's address; want none", n)
		}

		first := askEmailChange(t, env, a, testenv.Email())
		env.Call(t, "POST", path, a.Access, body(testenv.Email())).Want(t, 429)
		env.Clock.Advance(identity.ChangeEmailThrottle)
		next := testenv.Email()
		second := askEmailChange(t, env, a, next)
		env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": first}).Want(t, 401)

		env.Clock.Advance(pastReauth)
		wantSignInAgain(t, env.Call(t, "POST", path, a.Access, body(testenv.Email())), "change your email address")
		// The link asked for before still works: it proves the mailbox.
		env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": second}).Want(t, 200)
	})
}

// TestEmailChangeClaimedMeanwhile: an address someone registers between
// the request and the link is theirs; the link is refused and the account
// keeps its address. An expired link is refused too.
func TestEmailChangeClaimedMeanwhile(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		next := testenv.Email()
		tok := askEmailChange(t, env, a, next)
		env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": next, "password": "correct horse battery"}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": tok}).Want(t, 409)
		if got := meEmail(t, env, a.Access); got != a.Email {
			t.Errorf("address = %q; want %q kept", got, a.Email)
		}

		b := env.Register(t)
		tok = askEmailChange(t, env, b, testenv.Email())
		env.Clock.Advance(identity.ChangeEmailTTL + time.Second)
		env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": tok}).Want(t, 401)
	})
}

// TestEmailChangeUndo: the notice's link puts the old address back and
// disarms the account (sessions, password), since whoever changed it could
// sign in; it works once, the address that was taken away is told, and the
// owner signs in with an emailed link to the old address.
func TestEmailChangeUndo(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		next := testenv.Email()
		tok := askEmailChange(t, env, a, next)
		env.Call(t, "POST", "/v1/auth/email-change/confirm", "", map[string]string{"token": tok}).Want(t, 200)
		undo := env.MailToken(t, a.Email, undoLink)

		env.Call(t, "POST", "/v1/auth/email-change/undo", "", map[string]string{"token": undo}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/email-change/undo", "", map[string]string{"token": undo}).Want(t, 401)
		env.Refresh(t, a.Refresh).Want(t, 401)
		env.Login(t, next, a.Password).Want(t, 401)
		env.Login(t, a.Email, a.Password).Want(t, 401) // the password is gone too
		r := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, a.Email)}).Want(t, 200)
		if got := r.Str("user.id"); got != a.UserID {
			t.Errorf("magic link to the old address signed in %s; want %s", got, a.UserID)
		}
		env.WaitMail(t)
		if n := len(env.MailTexts(next, "reported as not made by its owner")); n != 1 {
			t.Errorf("%d notices to %s; want 1", n, next)
		}
		if got := env.StoredAudit(t, a.OrgID, "identity.user.email_change_undone"); len(got) != 1 {
			t.Errorf("undo entries = %v; want one", got)
		}
	})
}
