package pages_test

import (
	"html"
	"net/url"
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

// TestConsoleEmailChange: the account page sends a link to the new
// address and keeps the old one until it is opened; the link's page only
// shows a button (a GET changes nothing); the POST moves the account and
// a second POST of the same link is refused; the notice's undo link puts
// the old address back. A cross-site post changes nothing.
func TestConsoleEmailChange(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		wantPage(t, "GET /account", b.Get(t, "/account"), 200, `action="/account/email"`, "New email address")

		next := testenv.Email()
		forged := b.PostCrossSite(t, "/account/email", url.Values{"email": {next}})
		wantPage(t, "cross-site change", forged, 403, "Request refused")
		env.WaitMail(t) // none queued either
		if n := len(env.MailTexts(next, changeLink)); n != 0 {
			t.Fatalf("a cross-site post mailed %d change links", n)
		}

		other := env.Register(t)
		wantPage(t, "address of another account", b.Post(t, "/account/email", url.Values{"email": {other.Email}}), 409,
			`id="email-error">Another account uses this email address.`, `value="`+other.Email+`"`)

		res := b.Post(t, "/account/email", url.Values{"email": {next}})
		wantRedirect(t, "ask", res, "/account?done=email-link")
		wantPage(t, "asked", b.Get(t, res.Location()), 200, "A confirmation link is on its way to your new address.", html.EscapeString(a.Email))
		tok := env.MailToken(t, next, changeLink)

		wantPage(t, "link page", env.NewBrowser(t).Get(t, identity.ChangeEmailPath+"?token="+url.QueryEscape(tok)), 200, "Use this email address")
		if got := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200).Str("user.email"); got != a.Email {
			t.Fatalf("opening the link's page changed the address to %q", got)
		}
		anon := env.NewBrowser(t)
		wantPage(t, "confirm", anon.Post(t, identity.ChangeEmailPath, url.Values{"token": {tok}}), 200, "Email address changed", next)
		wantPage(t, "replayed link", anon.Post(t, identity.ChangeEmailPath, url.Values{"token": {tok}}), 401)
		wantPage(t, "this browser stays, with the new address", b.Get(t, "/account"), 200, next)

		undo := env.MailToken(t, a.Email, undoLink)
		wantPage(t, "undo page", anon.Get(t, identity.UndoEmailPath+"?token="+url.QueryEscape(undo)), 200, "It was not me: undo the change")
		wantPage(t, "undo", anon.Post(t, identity.UndoEmailPath, url.Values{"token": {undo}}), 200, "Change undone", html.EscapeString(a.Email))
		wantRedirect(t, "everyone signed out", b.Get(t, "/account"), "/signin?next=%2Faccount")
	})
}

// TestConsoleEmailChangeSignInAgain: a session whose sign-in is older than
// the window (a stolen one) cannot change the address; the page offers
// to sign in again, back to the form (kept), and sends no link.
func TestConsoleEmailChangeSignInAgain(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		env.Clock.Advance(identity.ReauthWindow + 1)
		next := testenv.Email()
		wantPage(t, "stale sign-in", b.Post(t, "/account/email", url.Values{"email": {next}}), 403,
			"<h1>Sign in again</h1>", `name="next" value="/account"`)
		env.WaitMail(t)
		env.WaitMail(t) // none queued either
		if n := len(env.MailTexts(next, changeLink)); n != 0 {
			t.Fatalf("a stale session mailed %d change links", n)
		}
	})
}

// TestEmailChangeSpentLink (issue 30 item 9 for the email change link): a
// link used already, replaced by a newer one or expired says which at
// once (410, no button), before anyone presses a button that would fail.
func TestEmailChangeSpentLink(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		ask := func(to string) string {
			t.Helper()
			wantRedirect(t, "ask", b.Post(t, "/account/email", url.Values{"email": {to}}), "/account?done=email-link")
			return identity.ChangeEmailPath + "?token=" + url.QueryEscape(env.MailToken(t, to, changeLink))
		}
		anon := env.NewBrowser(t)

		first := ask(testenv.Email())
		wantPage(t, "a fresh link", anon.Get(t, first), 200, "Use this email address")
		env.Clock.Advance(61 * time.Second) // one link a minute
		next := testenv.Email()
		second := ask(next)
		wantPage(t, "replaced by a newer link", anon.Get(t, first), 410, "or a newer link replaced it")

		tok, _ := url.ParseQuery(second[len(identity.ChangeEmailPath)+1:])
		wantPage(t, "confirm", anon.Post(t, identity.ChangeEmailPath, url.Values{"token": {tok.Get("token")}}), 200, "Email address changed")
		res := anon.Get(t, second)
		wantPage(t, "used", res, 410, "This link was used already: your account uses this email address.")
		if strings.Contains(res.Body, "Use this email address") {
			t.Fatalf("the used link's page still offers the button")
		}

		b = signedIn(t, env, &testenv.Account{Email: next, Password: a.Password})
		env.Clock.Advance(61 * time.Second)
		third := ask(testenv.Email())
		env.Clock.Advance(24*time.Hour + time.Second)
		wantPage(t, "expired", anon.Get(t, third), 410, "This link has expired", "each works for 24 hours")
	})
}
