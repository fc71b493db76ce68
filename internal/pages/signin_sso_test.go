package pages_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInDiscoveryNoEnumeration: home-realm discovery on the sign-in
// page answers by the domain alone: the same page for an address with an
// account and one without, in a domain with an enforced connection and in
// one with none; a password still goes to the password sign-in (the
// owners' break-glass when in the domain); a form from another site is refused.
func TestSignInDiscoveryNoEnumeration(t *testing.T) {
	idp := ssotest.New(t)
	testenv.RunWith(t, testenv.Options{AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Token, org, domain, "")
		conn := env.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Token, map[string]any{"name": "Acme IdP", "issuer": idp.URL, "client_id": ssotest.Client,
			"client_secret": ssotest.Secret, "domains": []string{domain}, "enforce": true}).Want(t, 200).Str("connection.id")
		member := env.Join(t, owner, org, "member")
		env.Exec(t, `UPDATE users SET email = $1, email_key = $1 WHERE id = $2`, "m-"+testenv.RandomHex(3)+"@"+domain, member.UserID)
		var memberEmail string
		env.Store.DB().QueryRow(`SELECT email FROM users WHERE id = $1`, member.UserID).Scan(&memberEmail)
		outsider := env.Register(t)
		b := env.NewBrowser(t)
		body := func(path, email, password string) string {
			t.Helper()
			p := b.Post(t, path, url.Values{"email": {email}, "password": {password}, "next": {"/"}})
			// The address typed is echoed; the rest must not differ.
			return strings.ReplaceAll(p.Body, email, "ADDRESS")
		}
		for _, path := range []string{"/signin", "/signin/sso"} {
			known, unknown := body(path, memberEmail, ""), body(path, "nobody-"+testenv.RandomHex(3)+"@"+domain, "")
			if known != unknown || !strings.Contains(known, "/v1/sso/start?connection="+conn) {
				t.Errorf("%s: the enforced domain's pages differ or do not lead to the connection", path)
			}
		}
		known, unknown := body("/signin/sso", outsider.Email, ""), body("/signin/sso", "nobody-"+testenv.RandomHex(3)+"@example.net", "")
		if known != unknown || !strings.Contains(known, "No single sign-on is set up") {
			t.Error("/signin/sso: pages of an address with and without an account differ")
		}
		// The owner's password goes on to the password sign-in.
		if p := b.Post(t, "/signin", url.Values{"email": {owner.Email}, "password": {owner.Password}, "next": {"/"}}); p.Status != 303 {
			t.Errorf("owner's password sign-in answered %d; want 303", p.Status)
		}
		if p := b.PostCrossSite(t, "/signin/sso", url.Values{"email": {memberEmail}}); p.Status != 403 {
			t.Errorf("cross-site discovery answered %d; want 403", p.Status)
		}
	})
}
