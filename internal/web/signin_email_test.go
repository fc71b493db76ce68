package web_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// An address is one account however its domain is spelled: its IDNA
// U-label and A-label forms are one key. The API answers the address as
// typed (lower-cased).
func TestSigninEmailIDN(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		local := "idn-" + testenv.RandomHex(4)
		ulabel, alabel := local+"@exämple.com", local+"@xn--exmple-cua.com"
		pw := "correct horse battery"
		reg := func(email string) map[string]any { return map[string]any{"email": email, "password": pw} }
		const path = "/v1/auth/register"
		var userID string
		runSigninCases(t, env, []signinCase{
			{name: "U-label address", method: "POST", path: path, body: reg(ulabel), wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					userID = r.Str("user.id")
					if got := r.Str("user.email"); got != ulabel {
						t.Errorf("user.email = %q; want %q as typed", got, ulabel)
					}
				}},
			{name: "A-label form of the same address", method: "POST", path: path, body: reg(alabel), wantStatus: 409},
			{name: "A-label form in upper case", method: "POST", path: path, body: reg(strings.ToUpper(alabel)), wantStatus: 409},
			{name: "U-label form decomposed", method: "POST", path: path, body: reg(local + "@exa\u0308mple.com"), wantStatus: 409},
		})
		for _, email := range []string{ulabel, alabel, " " + strings.ToUpper(ulabel)} {
			t.Run("login as "+email, func(t *testing.T) {
				if got := signinLogin(t, env, email, pw).Want(t, 200).Str("user.id"); got != userID {
					t.Errorf("user.id = %q; want %q, the account registered as %s", got, userID, ulabel)
				}
			})
		}
	})
}

// Invisible and full-width characters and address literals are refused
// where an address is given: 400 at registration and for a magic link, the
// 401 of a bad credential at login.
func TestSigninEmailRefused(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for _, bad := range []struct{ name, email string }{
			{"zero-width space", "u\u200bser-" + testenv.RandomHex(3) + "@example.com"},
			{"zero-width joiner in the domain", "user-" + testenv.RandomHex(3) + "@exam\u200dple.com"},
			{"soft hyphen", "us\u00ader-" + testenv.RandomHex(3) + "@example.com"},
			{"right-to-left override", "user-" + testenv.RandomHex(3) + "\u202e@example.com"},
			{"full-width local part", "\uff55ser-" + testenv.RandomHex(3) + "@example.com"},
			{"full-width domain", "user-" + testenv.RandomHex(3) + "@\uff45xample.com"},
			{"IPv4 literal", "user-" + testenv.RandomHex(3) + "@[127.0.0.1]"},
			{"IPv4 address", "user-" + testenv.RandomHex(3) + "@127.0.0.1"},
			{"IPv6 literal", "user-" + testenv.RandomHex(3) + "@[IPv6:::1]"},
		} {
			runSigninCases(t, env, []signinCase{
				{name: "register with " + bad.name, method: "POST", path: "/v1/auth/register",
					body: map[string]any{"email": bad.email, "password": "correct horse battery"}, wantStatus: 400, wantBody: signinErrorNames("email")},
				{name: "magic link with " + bad.name, method: "POST", path: "/v1/auth/magic-link",
					body: map[string]any{"email": bad.email}, wantStatus: 400, wantBody: signinErrorNames("email")},
				{name: "login with " + bad.name, method: "POST", path: "/v1/auth/login",
					body: map[string]any{"email": bad.email, "password": "correct horse battery"}, wantStatus: 401},
			})
		}
	})
}

// A magic link asked for with either spelling of an address signs in to
// the one account, and creates none.
func TestSigninEmailMagicLinkIDN(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		local := "idn-" + testenv.RandomHex(4)
		ulabel, alabel := local+"@bücher.example", local+"@xn--bcher-kva.example"
		a := signinCall(t, env, "POST", "/v1/auth/register", "", map[string]any{"email": alabel, "password": "correct horse battery"}).Want(t, 200)
		r := signinCall(t, env, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": signinMagicToken(t, env, ulabel)}).Want(t, 200)
		if got, want := r.Str("user.id"), a.Str("user.id"); got != want {
			t.Errorf("magic link to %s signed in to %s; want the account %s registered as %s", ulabel, got, want, alabel)
		}
		if got := r.Str("user.email"); got != alabel {
			t.Errorf("user.email = %q; want %q, as registered", got, alabel)
		}
	})
}

// An invitation to either spelling of an address is the addressee's.
func TestSigninEmailInvitationIDN(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := orgsTeam(t, env)
		local := "idn-" + testenv.RandomHex(4)
		ulabel, alabel := local+"@bücher.example", local+"@xn--bcher-kva.example"
		invitee := signinCall(t, env, "POST", "/v1/auth/register", "", map[string]any{"email": alabel, "password": "correct horse battery"}).Want(t, 200)
		tok := orgsInvite(t, env, owner.Token, org, ulabel, "member")
		r := env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", invitee.Str("access_token"), nil).Want(t, 200)
		if got := r.Get("already_member"); got != false {
			t.Errorf("already_member = %v; want false", got)
		}
		if got := wsRole(t, env, org, invitee.Str("user.id")); got != "member" {
			t.Errorf("role after accepting = %q; want member", got)
		}
	})
}

// Domain auto-join compares A-labels: a claim on an IDN domain takes in an
// address typed with the U-label.
func TestSigninEmailAutoJoinIDN(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		domain := "bücher-" + testenv.RandomHex(3) + ".test"
		wsVerifiedDomain(t, env, w.owner.Access, w.org, domain, "auto_join")
		a := wsVerifiedAt(t, env, domain)
		if got := wsRole(t, env, w.org, a.UserID); got != "member" {
			t.Errorf("role of %s after verifying = %q; want member", a.Email, got)
		}
	})
}

// The failed-login limit counts an account once, whichever spelling of its
// address is tried.
func TestSigninEmailFailedLoginsIDN(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		local := "idn-" + testenv.RandomHex(4)
		ulabel, alabel := local+"@exämple.com", local+"@xn--exmple-cua.com"
		signinCall(t, env, "POST", "/v1/auth/register", "", map[string]any{"email": ulabel, "password": "correct horse battery"}).Want(t, 200)
		for i := 1; i <= 10; i++ {
			if r := signinLogin(t, env, ulabel, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		runSigninCases(t, env, []signinCase{
			{name: "A-label spelling after 10 failures", method: "POST", path: "/v1/auth/login",
				body: map[string]string{"email": alabel, "password": "correct horse battery"}, wantStatus: 429, wantBody: signinRetryAfter},
		})
	})
}
