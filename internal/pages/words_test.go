package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestWordsSignUpAddress: every sign-up address error ends with a "Sign
// in instead" link (issue 30 item 9): a taken address and one that is not
// an address alike.
func TestWordsSignUpAddress(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		for what, email := range map[string]string{"taken": a.Email, "not an address": "not-an-address"} {
			res := b.Post(t, "/signup", url.Values{"email": {email}, "password": {"a long enough passphrase"}, "next": {"/"}})
			i := strings.Index(res.Body, `id="email-error"`)
			if i < 0 {
				t.Fatalf("%s: no address error:\n%.3000s", what, res.Body)
			}
			errText, _, _ := strings.Cut(res.Body[i:], "</p>")
			if !strings.HasSuffix(errText, `<a href="/signin">Sign in instead</a>`) {
				t.Fatalf("%s: the address error does not end with a sign-in link: %q", what, errText)
			}
		}
	})
}

// TestWordsUsedConfirmationLink: a second click on a used confirmation
// link says the link was used and that the address is confirmed, at the
// link (GET) and on its button (POST); an expired one says it expired.
func TestWordsUsedConfirmationLink(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := env.MailToken(t, a.Email, "http://web.test/verify-email?token=")
		b := env.NewBrowser(t)
		wantPage(t, "first click", b.Get(t, "/verify-email?token="+url.QueryEscape(tok)), 200, "Confirm my email address")
		wantPage(t, "confirm", b.Post(t, "/verify-email", url.Values{"token": {tok}}), 200, "Email confirmed")
		const said = "This confirmation link was used already: your email address is confirmed."
		wantPage(t, "second click", b.Get(t, "/verify-email?token="+url.QueryEscape(tok)), http.StatusGone, said)
		wantPage(t, "second post", b.Post(t, "/verify-email", url.Values{"token": {tok}}), http.StatusGone, said)

		c := env.Register(t)
		late := env.MailToken(t, c.Email, "http://web.test/verify-email?token=")
		env.Clock.Advance(8 * 24 * time.Hour)
		wantPage(t, "expired", b.Get(t, "/verify-email?token="+url.QueryEscape(late)), http.StatusGone, "This confirmation link has expired. Ask for a new one")
		wantPage(t, "unknown link", b.Get(t, "/verify-email?token=nope"), 200, "Confirm my email address")
	})
}

// TestWordsUsedResetLink: a used reset link says so on opening, before
// any new password is typed.
func TestWordsUsedResetLink(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		wantPage(t, "request", b.Post(t, "/recover", url.Values{"email": {a.Email}}), 200, "Check your email")
		tok := env.MailToken(t, a.Email, "http://web.test/reset-password?token=")
		wantRedirect(t, "reset", b.Post(t, "/reset-password", url.Values{"token": {tok}, "new_password": {"a page-chosen passphrase"}}), "/")
		res := b.Get(t, "/reset-password?token="+url.QueryEscape(tok))
		wantPage(t, "used link", res, http.StatusGone, "This link to choose a new password was used already", `href="/recover"`)
		if strings.Contains(res.Body, `name="new_password"`) {
			t.Fatalf("a used link still offers the password form")
		}
	})
}

// TestWordsCheckYourEmail: every check-your-email page (a sign-in link,
// a password reset link) offers "Send again", which sends the same
// request again, and "Back to sign in".
func TestWordsCheckYourEmail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		for _, tc := range []struct{ action, link string }{
			{"/signin/magic", "http://web.test/auth/magic?token="},
			{"/recover", "http://web.test/reset-password?token="},
		} {
			form := url.Values{"email": {a.Email}}
			res := b.Post(t, tc.action, form)
			wantPage(t, tc.action, res, 200, "Check your email", `<form method="post" action="`+tc.action+`" class="resend">`,
				`name="email" value="`+a.Email+`"`, ">Send again</button>", `<a href="/signin">Back to sign in</a>`)
			env.MailToken(t, a.Email, tc.link)
			wantPage(t, tc.action+" again", b.Post(t, tc.action, form), 200, "Check your email")
			env.WaitMailToken(t, a.Email, tc.link, 2)
		}
	})
}

// TestWordsEmptyInvitation: an invitation form sent empty says what is
// missing, next to its field.
func TestWordsEmptyInvitation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Guild", [2]string{owner.UserID, "owner"})
		res := signedIn(t, env, owner).Post(t, "/workspaces/"+org+"/invitations", url.Values{"emails": {""}, "role": {"member"}})
		wantPage(t, "empty", res, http.StatusBadRequest, `id="emails-error">At least one email address is required for email invitations.</p>`)
	})
}
