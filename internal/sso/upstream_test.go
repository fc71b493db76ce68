package sso_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// siteBrowser keeps each site's cookies apart (a browser of its own per
// host and port), as a browser does for two services on hosts of their
// own: both Gatehouses here are on 127.0.0.1 and name their cookies
// alike.
type siteBrowser struct {
	env   *testenv.Env
	sites map[string]*browser
}

func newSiteBrowser(env *testenv.Env) *siteBrowser {
	return &siteBrowser{env: env, sites: map[string]*browser{}}
}

func (b *siteBrowser) site(host string) *browser {
	if b.sites[host] == nil {
		b.sites[host] = newBrowser(b.env)
	}
	return b.sites[host]
}

// do sends a GET (form nil) or a form POST to raw from b.
func (b *siteBrowser) do(t *testing.T, raw string, form url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", raw, nil)
	if form != nil {
		req, err = http.NewRequest("POST", raw, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.site(req.URL.Host).do(t, req)
}

// session is the user of b's session at env ("" when none).
func (b *siteBrowser) session(t *testing.T, env *testenv.Env) string {
	u, _ := url.Parse(env.URL)
	return sessionUser(t, env, b.site(u.Host))
}

// upstream is a second Gatehouse, with a database and keys of its own,
// as a workspace's OpenID provider: its team org registered an
// application whose redirect URI is env's SSO callback, and person is
// a member there with a verified address in domain.
type upstream struct {
	env            *testenv.Env
	org, callback  string
	owner, person  *testenv.Account
	client, secret string
}

func newUpstream(t *testing.T, env *testenv.Env, domain string) *upstream {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), testenv.FreshURL(t, env.DB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	o := opts
	o.DB = db
	u := &upstream{env: testenv.New(t, env.DB, o), callback: env.URL + "/v1/sso/callback"}
	u.owner, u.org = u.env.Team(t)
	u.client, u.secret = u.register(t)
	u.person = u.member(t, domain)
	return u
}

// register registers a confidential application at u whose redirect URI
// is our callback; its client id and secret.
func (u *upstream) register(t *testing.T) (string, string) {
	t.Helper()
	r := u.env.Do(t, "POST", "/v1/orgs/"+u.org+"/applications", u.owner.Token, map[string]any{"client_name": "Downstream Gatehouse",
		"redirect_uris": []string{u.callback}}).Want(t, 200)
	return r.Str("application.client_id"), r.Str("client_secret")
}

// member is a new member of u's org with a verified address in domain.
func (u *upstream) member(t *testing.T, domain string) *testenv.Account {
	t.Helper()
	a := u.env.VerifiedAt(t, domain)
	u.env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, u.org, a.UserID)
	return a
}

// authorize runs a's part at the upstream from its authorization URL
// raw: signs in when asked, approves for u's org, and returns the
// redirect back to the relying party.
func (u *upstream) authorize(t *testing.T, b *siteBrowser, raw string, a *testenv.Account) string {
	t.Helper()
	resp := b.do(t, raw, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && strings.Contains(loc, "/signin") {
		next := strings.TrimPrefix(raw, u.env.URL)
		if r := b.do(t, u.env.URL+"/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}}); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("upstream sign-in answered %d; want 303", r.StatusCode)
		}
		resp = b.do(t, raw, nil)
	}
	if resp.StatusCode == http.StatusOK {
		page := readAll(t, resp)
		form := hidden(page)
		if !strings.Contains(page, `name="org_id"`) {
			t.Fatalf("upstream authorize page without the consent form:\n%s", page)
		}
		form.Set("decision", "approve")
		form.Set("org_id", u.org)
		resp = b.do(t, u.env.URL+"/oauth/authorize", form)
	}
	if resp.StatusCode/100 != 3 {
		t.Fatalf("upstream authorization answered %d; want a redirect back", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// hidden is the hidden inputs of a page's forms.
func hidden(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUpstreamGatehouse: a workspace's OpenID Connect connection whose
// issuer is another Gatehouse, walked as a customer would: the upstream's
// admin registers an application for our callback, our admin connects
// it, and a member of the upstream signs in here through the browser's
// redirects (start, the upstream's sign-in and consent, our callback):
// the account is made, a member, with a session; a second sign-in lands
// on the same account. A code the upstream issued to another of its
// clients, brought to our callback with our flow's state, is refused.
func TestUpstreamGatehouse(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		domain := testenv.Domain()
		up := newUpstream(t, env, domain)
		owner, org := env.Team(t)
		env.VerifiedDomain(t, owner.Token, org, domain, "")
		conn := env.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Token, map[string]any{"name": "Upstream Gatehouse", "issuer": up.env.URL,
			"client_id": up.client, "client_secret": up.secret, "domains": []string{domain}}).Want(t, 200).Str("connection.id")

		signIn := func(a *testenv.Account) (*http.Response, *siteBrowser) {
			b := newSiteBrowser(env)
			resp := b.do(t, env.URL+"/v1/sso/start?connection="+conn+"&next=/console", nil)
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, up.env.URL+"/oauth/authorize?") {
				t.Fatalf("start answered %d to %q; want the upstream's authorization endpoint", resp.StatusCode, loc)
			}
			back := up.authorize(t, b, loc, a)
			if !strings.HasPrefix(back, env.URL+"/v1/sso/callback?") {
				t.Fatalf("the upstream sent the browser to %q; want our callback", back)
			}
			return b.do(t, back, nil), b
		}
		resp, b := signIn(up.person)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console" {
			t.Fatalf("callback answered %d to %q, %v; want 303 to /console\n%s", resp.StatusCode, resp.Header.Get("Location"), body(t, resp), env.Logs.String())
		}
		id := b.session(t, env)
		if id == "" || id != userByEmail(t, env, up.person.Email) {
			t.Fatalf("session user %q; want the new account of %s", id, up.person.Email)
		}
		if role := env.Role(t, org, id); role != "member" {
			t.Errorf("role %q; want member", role)
		}
		if b.session(t, up.env) != up.person.UserID {
			t.Error("the browser holds no upstream session of the person")
		}
		if resp, b := signIn(up.person); resp.StatusCode != http.StatusSeeOther || b.session(t, env) != id {
			t.Errorf("second sign-in answered %d for %q; want 303 for %s", resp.StatusCode, b.session(t, env), id)
		}

		t.Run("code of another client", func(t *testing.T) {
			otherClient, _ := up.register(t)
			victim := up.member(t, domain)
			b := newSiteBrowser(env)
			loc := b.do(t, env.URL+"/v1/sso/start?connection="+conn, nil).Header.Get("Location")
			u, _ := url.Parse(loc)
			q := u.Query()
			q.Set("client_id", otherClient)
			u.RawQuery = q.Encode()
			back := up.authorize(t, b, u.String(), victim)
			resp := b.do(t, back, nil)
			if resp.StatusCode/100 == 2 || resp.StatusCode/100 == 3 || b.session(t, env) != "" || userByEmail(t, env, victim.Email) != "" {
				t.Errorf("callback answered %d (session %q); want a refusal, no session, no account", resp.StatusCode, b.session(t, env))
			}
		})
	})
}
