package identity_test

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
		env.RunCases(t, []testenv.Case{
			{Name: "U-label address", Method: "POST", Path: path, Body: reg(ulabel), Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					userID = r.Str("user.id")
					if got := r.Str("user.email"); got != ulabel {
						t.Errorf("user.email = %q; want %q as typed", got, ulabel)
					}
				}},
			{Name: "A-label form of the same address", Method: "POST", Path: path, Body: reg(alabel), Want: 409},
			{Name: "A-label form in upper case", Method: "POST", Path: path, Body: reg(strings.ToUpper(alabel)), Want: 409},
			{Name: "U-label form decomposed", Method: "POST", Path: path, Body: reg(local + "@exa\u0308mple.com"), Want: 409},
		})
		for _, email := range []string{ulabel, alabel, " " + strings.ToUpper(ulabel)} {
			t.Run("login as "+email, func(t *testing.T) {
				if got := env.Login(t, email, pw).Want(t, 200).Str("user.id"); got != userID {
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
			env.RunCases(t, []testenv.Case{
				{Name: "register with " + bad.name, Method: "POST", Path: "/v1/auth/register",
					Body: map[string]any{"email": bad.email, "password": "correct horse battery"}, Want: 400, Check: testenv.ErrorNames("email")},
				{Name: "magic link with " + bad.name, Method: "POST", Path: "/v1/auth/magic-link",
					Body: map[string]any{"email": bad.email}, Want: 400, Check: testenv.ErrorNames("email")},
				{Name: "login with " + bad.name, Method: "POST", Path: "/v1/auth/login",
					Body: map[string]any{"email": bad.email, "password": "correct horse battery"}, Want: 401},
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
		a := env.Call(t, "POST", "/v1/auth/register", "", map[string]any{"email": alabel, "password": "correct horse battery"}).Want(t, 200)
		r := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, ulabel)}).Want(t, 200)
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
		owner, org := env.Team(t)
		local := "idn-" + testenv.RandomHex(4)
		ulabel, alabel := local+"@bücher.example", local+"@xn--bcher-kva.example"
		invitee := env.Call(t, "POST", "/v1/auth/register", "", map[string]any{"email": alabel, "password": "correct horse battery"}).Want(t, 200)
		tok := env.Invite(t, owner.Token, org, ulabel, "member")
		r := env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", invitee.Str("access_token"), nil).Want(t, 200)
		if got := r.Get("already_member"); got != false {
			t.Errorf("already_member = %v; want false", got)
		}
		if got := env.Role(t, org, invitee.Str("user.id")); got != "member" {
			t.Errorf("role after accepting = %q; want member", got)
		}
	})
}

// Domain auto-join compares A-labels: a claim on an IDN domain takes in an
// address typed with the U-label.
func TestSigninEmailAutoJoinIDN(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := "bücher-" + testenv.RandomHex(3) + ".test"
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "auto_join")
		a := env.VerifiedAt(t, domain)
		if got := env.Role(t, w.Org, a.UserID); got != "member" {
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
		env.Call(t, "POST", "/v1/auth/register", "", map[string]any{"email": ulabel, "password": "correct horse battery"}).Want(t, 200)
		for i := 1; i <= 10; i++ {
			if r := env.Login(t, ulabel, "wrong-password"); r.Status != 401 {
				t.Fatalf("failed login %d: status = %d, body %s; want 401", i, r.Status, r.Body)
			}
		}
		env.RunCases(t, []testenv.Case{
			{Name: "A-label spelling after 10 failures", Method: "POST", Path: "/v1/auth/login",
				Body: map[string]string{"email": alabel, "password": "correct horse battery"}, Want: 429, Check: testenv.WantRetryAfter},
		})
	})
}
