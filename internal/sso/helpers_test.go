package sso_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// provider is ssotest's OpenID provider: discovery, a JWK Set, an
// authorization endpoint that approves at once, and a token endpoint that
// checks the client secret and PKCE and signs ID tokens with a real RSA
// key.
type provider struct{ *ssotest.Provider }

const idpClient, idpSecret = ssotest.Client, ssotest.Secret

func newProvider(t *testing.T) *provider { return &provider{ssotest.New(t)} }

// as sets the claims of the next ID tokens (nil values leave one out).
func (p *provider) as(claims map[string]any) { p.SetClaims(claims) }

// fixture is a team org with a verified domain and a connection to a
// test provider.
type fixture struct {
	env    *testenv.Env
	idp    *provider
	owner  *testenv.Account
	org    string
	domain string
	conn   string
}

// opts are the options of every SSO test: the provider is on loopback.
var opts = testenv.Options{AllowPrivate: true}

func newFixture(t *testing.T, env *testenv.Env) *fixture {
	t.Helper()
	f := &fixture{env: env, idp: newProvider(t), domain: testenv.Domain()}
	f.owner, f.org = env.Team(t)
	env.VerifiedDomain(t, f.owner.Token, f.org, f.domain, "")
	r := env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, map[string]any{"name": "Acme IdP", "issuer": f.idp.URL,
		"client_id": idpClient, "client_secret": idpSecret, "domains": []string{f.domain}}).Want(t, 200)
	f.conn = r.Str("connection.id")
	return f
}

// browser is a client that does not follow redirects and keeps cookies
// by hand.
type browser struct {
	c       *http.Client
	cookies map[string]string
}

func newBrowser(env *testenv.Env) *browser {
	return &browser{c: &http.Client{Transport: env.Client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		cookies: map[string]string{}}
}

// do sends req from b with its cookies and keeps the cookies of the
// answer; the body is closed when the test ends.
func (b *browser) do(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return resp
}

func (b *browser) get(t *testing.T, raw string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.do(t, req)
}

// authorize starts a sign-in through f's connection in b and returns the
// provider's redirect back to the callback (not followed).
func (f *fixture) authorize(t *testing.T, b *browser) string {
	t.Helper()
	resp := b.get(t, f.env.URL+"/v1/sso/start?connection="+f.conn+"&next=/console")
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("start answered %d; want 302", resp.StatusCode)
	}
	resp = b.get(t, resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("provider answered %d; want 302", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// signIn runs a whole sign-in as claims and returns the callback's answer.
func (f *fixture) signIn(t *testing.T, claims map[string]any) (*http.Response, *browser) {
	t.Helper()
	f.idp.as(claims)
	b := newBrowser(f.env)
	return b.get(t, f.authorize(t, b)), b
}

// body is resp's body.
func body(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return m
}
