package sso_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// jagFixture is a team org whose connection's provider may issue ID-JAGs
// for client, to the tasks API, with the tasks scopes; person is a
// member with an address in the connection's domain.
type jagFixture struct {
	*fixture
	client   string
	resource string
	person   *testenv.Account
}

func newJagFixture(t *testing.T, env *testenv.Env) *jagFixture {
	t.Helper()
	f := &jagFixture{fixture: newFixture(t, env), resource: env.URL + "/tasks"}
	f.client = env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "AI client",
		"redirect_uris": []string{"http://127.0.0.1:53682/callback"}}).Want(t, 201).Str("client_id")
	f.person = env.VerifiedAt(t, f.domain)
	env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, f.org, f.person.UserID)
	f.setPolicy(t, map[string]any{"connections": []string{f.conn}, "clients": []string{f.client}, "resources": []string{f.resource},
		"scopes": []string{"tasks:read", "tasks:write", "email"}})
	return f
}

func (f *jagFixture) setPolicy(t *testing.T, accept map[string]any) {
	t.Helper()
	f.env.Call(t, "PUT", "/v1/orgs/"+f.org+"/sso/idjag", f.owner.Token, map[string]any{"accept": accept}).Want(t, 200)
}

// claims are a valid ID-JAG's claims for f's person, changed by over
// (a nil value leaves a claim out).
func (f *jagFixture) claims(over map[string]any) map[string]any {
	now := f.env.Clock.Now()
	c := map[string]any{"iss": f.idp.URL, "sub": "idp-" + testenv.RandomHex(4), "aud": f.env.URL, "client_id": f.client,
		"resource": f.resource, "scope": "tasks:read", "jti": testenv.RandomHex(12), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"email": f.person.Email}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func (f *jagFixture) jag(t *testing.T, over map[string]any) string {
	return f.idp.Sign(t, sso.IDJAGType, f.claims(over))
}

// exchange presents assertion at the token endpoint as client.
func exchange(t *testing.T, env *testenv.Env, client, assertion string, extra url.Values) *testenv.Resp {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}, "client_id": {client}}
	for k, v := range extra {
		form[k] = v
	}
	return env.PostForm(t, "/oauth/token", form)
}

func wantRefused(t *testing.T, r *testenv.Resp, code string) {
	t.Helper()
	if r.Status != 400 || r.Str("error") != code || r.Str("error_description") == "" {
		t.Fatalf("got %d %s; want 400 %s with a description", r.Status, r.Body, code)
	}
}

// TestIDJAGAccepted: a valid ID-JAG gets an access token for the member,
// bound to the resource with the asked scope, without refresh or ID
// token; it calls the tasks API and reads only; the jti is spent; the
// exchange is audited.
func TestIDJAGAccepted(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		jag := f.jag(t, nil)
		r := exchange(t, env, f.client, jag, nil).Want(t, 200)
		if r.Get("refresh_token") != nil || r.Get("id_token") != nil || r.Str("token_type") != "Bearer" || r.Str("scope") != "tasks:read" {
			t.Fatalf("answer %s; want a Bearer token with scope tasks:read and no refresh or ID token", r.Body)
		}
		at := r.Str("access_token")
		c := testenv.Claims(t, at)
		if c["sub"] != f.person.UserID {
			t.Errorf("token sub = %v; want %s", c["sub"], f.person.UserID)
		}
		if org, _, _ := testenv.TokenOrg(t, at); org != f.org {
			t.Errorf("token org = %s; want %s", org, f.org)
		}
		if !strings.Contains(string(r.Body), `"expires_in"`) {
			t.Errorf("answer %s has no expires_in", r.Body)
		}
		env.Call(t, "GET", "/tasks/v1/issues", at, nil).Want(t, 200)
		env.Call(t, "POST", "/tasks/v1/issues", at, map[string]any{"title": "x"}).Want(t, 403)
		// Replayed: refused on this instance and on another one.
		wantRefused(t, exchange(t, env, f.client, jag, nil), "invalid_grant")
		wantRefused(t, exchange(t, env.Another(t), f.client, jag, nil), "invalid_grant")
		if n := len(env.StoredAudit(t, f.org, "identity.oauth.assertion_accepted")); n != 1 {
			t.Errorf("%d accepted audit entries; want 1", n)
		}
		if n := len(env.StoredAudit(t, f.org, "identity.sso.idjag_refused")); n != 2 {
			t.Errorf("%d refused audit entries; want 2", n)
		}
		// Security events name the method; the assertion and the token stay out of the log.
		logs := env.Logs.String()
		for _, want := range []string{"event=auth.signin.success", "event=auth.signin.failure"} {
			if !strings.Contains(logs, want+" ") || !strings.Contains(logs, "method=oauth_idjag") {
				t.Errorf("no %s event with method=oauth_idjag", want)
			}
		}
		if strings.Contains(logs, jag) || strings.Contains(logs, at) {
			t.Error("the log holds the assertion or the access token")
		}
		// A narrower scope in the request narrows the token.
		r = exchange(t, env, f.client, f.jag(t, map[string]any{"scope": "tasks:read tasks:write"}), url.Values{"scope": {"tasks:write"}}).Want(t, 200)
		if r.Str("scope") != "tasks:write" {
			t.Errorf("narrowed scope = %q; want tasks:write", r.Str("scope"))
		}
	})
}

// TestIDJAGKeySetKept: the provider's JWK Set is read once for many
// exchanges, and again only for a key id it does not hold (an exchange
// that read it every time would cost a request to the provider each, and
// hand the provider our token endpoint's load).
func TestIDJAGKeySetKept(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		for range 3 {
			exchange(t, env, f.client, f.jag(t, nil), nil).Want(t, 200)
		}
		if n := f.idp.JWKSReads(); n != 1 {
			t.Fatalf("the JWK Set was read %d times for 3 exchanges; want 1", n)
		}
	})
}

// TestIDJAGReplayRace: the same ID-JAG sent at once to two instances
// is accepted once.
func TestIDJAGReplayRace(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		other := env.Another(t)
		jag := f.jag(t, nil)
		var mu sync.Mutex
		ok := 0
		testenv.AtOnce(8, func(i int) {
			e := env
			if i%2 == 1 {
				e = other
			}
			if r := exchange(t, e, f.client, jag, nil); r.Status == 200 {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
		if ok != 1 {
			t.Fatalf("%d exchanges of one ID-JAG succeeded; want 1", ok)
		}
	})
}

// TestIDJAGRefused: every way an ID-JAG can be wrong is refused with the
// RFC 6749 error that names it.
func TestIDJAGRefused(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		stranger := env.VerifiedAt(t, f.domain)    // an address of the domain, not a member
		unconfirmed := env.RegisterAt(t, f.domain) // a member whose address is not confirmed
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, f.org, unconfirmed.UserID)
		otherClient := env.Do(t, "POST", "/oauth/register", "", map[string]any{"redirect_uris": []string{"http://127.0.0.1:1/cb"}}).Want(t, 201).Str("client_id")
		now := env.Clock.Now()
		cases := []struct {
			name, typ string
			over      map[string]any
			client    string
			code, why string
		}{
			{"wrong typ", "JWT", nil, "", "invalid_grant", "type"},
			{"wrong aud", "", map[string]any{"aud": "https://other.example"}, "", "invalid_grant", "audience"},
			{"client_id of another client", "", map[string]any{"client_id": otherClient}, "", "invalid_grant", "another client"},
			{"presented by another client", "", nil, otherClient, "invalid_grant", "another client"},
			{"issuer of no connection", "", map[string]any{"iss": "https://idp.example"}, "", "invalid_grant", "no workspace"},
			{"expired", "", map[string]any{"iat": now.Add(-10 * time.Minute).Unix(), "exp": now.Add(-time.Minute).Unix()}, "", "invalid_grant", "expired"},
			{"lifetime too long", "", map[string]any{"exp": now.Add(time.Hour).Unix()}, "", "invalid_grant", "lifetime"},
			{"no jti", "", map[string]any{"jti": nil}, "", "invalid_grant", "jti"},
			{"not a member", "", map[string]any{"email": stranger.Email}, "", "invalid_grant", "not a member"},
			{"address of another domain", "", map[string]any{"email": testenv.Email()}, "", "invalid_grant", "not a member"},
			{"account address unconfirmed", "", map[string]any{"email": unconfirmed.Email}, "", "invalid_grant", "not a member"},
			{"unverified address", "", map[string]any{"email_verified": false}, "", "invalid_grant", "not a member"},
			{"resource outside the policy", "", map[string]any{"resource": env.URL + "/forms"}, "", "invalid_target", "resource"},
			{"scope outside the policy", "", map[string]any{"scope": "forms:read"}, "", "invalid_scope", "scope"},
			{"no tool scope", "", map[string]any{"scope": "openid email"}, "", "invalid_scope", "scope"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				typ, client := sso.IDJAGType, f.client
				if c.typ != "" {
					typ = c.typ
				}
				if c.client != "" {
					client = c.client
				}
				r := exchange(t, env, client, f.idp.Sign(t, typ, f.claims(c.over)), nil)
				wantRefused(t, r, c.code)
				if !strings.Contains(r.Str("error_description"), c.why) {
					t.Errorf("error_description %q; want it to say %q", r.Str("error_description"), c.why)
				}
			})
		}
		t.Run("key not in the JWKS", func(t *testing.T) {
			key, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				t.Fatal(err)
			}
			f.idp.SignWith(key)
			defer f.idp.SignWith(nil)
			wantRefused(t, exchange(t, env, f.client, f.jag(t, nil), nil), "invalid_grant")
		})
		t.Run("algorithm the provider does not announce", func(t *testing.T) {
			// PS256 with the provider's own RSA key verifies; the provider
			// announces RS256 only.
			wantRefused(t, exchange(t, env, f.client, f.idp.SignAlg(t, sso.IDJAGType, "k1", jose.PS256, f.claims(nil)), nil), "invalid_grant")
		})
		t.Run("JSON serialization", func(t *testing.T) {
			parts := strings.Split(f.jag(t, nil), ".")
			flat := `{"protected":"` + parts[0] + `","payload":"` + parts[1] + `","signature":"` + parts[2] + `"}`
			wantRefused(t, exchange(t, env, f.client, flat, nil), "invalid_grant")
		})
		t.Run("request resource differs", func(t *testing.T) {
			wantRefused(t, exchange(t, env, f.client, f.jag(t, nil), url.Values{"resource": {env.URL + "/links"}}), "invalid_target")
		})
		t.Run("request scope widens", func(t *testing.T) {
			wantRefused(t, exchange(t, env, f.client, f.jag(t, nil), url.Values{"scope": {"tasks:write"}}), "invalid_scope")
		})
		t.Run("unknown client", func(t *testing.T) {
			r := exchange(t, env, "no-such-client", f.jag(t, nil), nil)
			if r.Status != 401 || r.Str("error") != "invalid_client" {
				t.Fatalf("got %d %s; want 401 invalid_client", r.Status, r.Body)
			}
		})
		t.Run("workspace requires two-factor", func(t *testing.T) {
			// The session is refused in the transaction that spends the jti:
			// refused and audited, the assertion is not spent, and once the
			// workspace allows it the same assertion starts one session.
			refused := len(env.StoredAudit(t, f.org, "identity.sso.idjag_refused"))
			jag := f.jag(t, nil)
			env.Exec(t, `UPDATE orgs SET require_mfa = TRUE WHERE id = $1`, f.org)
			wantRefused(t, exchange(t, env, f.client, jag, nil), "invalid_grant")
			env.Exec(t, `UPDATE orgs SET require_mfa = FALSE WHERE id = $1`, f.org)
			if n := len(env.StoredAudit(t, f.org, "identity.sso.idjag_refused")); n != refused+1 {
				t.Errorf("%d refused audit entries; want %d", n, refused+1)
			}
			if n := len(env.StoredAudit(t, f.org, "identity.oauth.assertion_accepted")); n != 0 {
				t.Errorf("%d accepted audit entries after a refused session; want 0", n)
			}
			exchange(t, env, f.client, jag, nil).Want(t, 200)
			wantRefused(t, exchange(t, env, f.client, jag, nil), "invalid_grant")
		})
		t.Run("expired by the clock", func(t *testing.T) {
			jag := f.jag(t, nil)
			env.Clock.Advance(5*time.Minute + sso.IDJAGSkew)
			wantRefused(t, exchange(t, env, f.client, jag, nil), "invalid_grant")
		})
	})
}

// TestIDJAGOffUnlessAllowed: without the connection in the policy, or
// without the client, a valid ID-JAG is refused; a SAML or foreign
// connection cannot be listed; only owners and admins set the policy.
func TestIDJAGOffUnlessAllowed(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		f.setPolicy(t, map[string]any{"connections": []string{}, "clients": []string{f.client}, "resources": []string{f.resource}, "scopes": []string{"tasks:read"}})
		wantRefused(t, exchange(t, env, f.client, f.jag(t, nil), nil), "invalid_grant")
		f.setPolicy(t, map[string]any{"connections": []string{f.conn}, "clients": []string{}, "resources": []string{f.resource}, "scopes": []string{"tasks:read"}})
		wantRefused(t, exchange(t, env, f.client, f.jag(t, nil), nil), "invalid_grant")

		r := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/idjag", f.owner.Token, nil).Want(t, 200)
		if got := testenv.Strings(r.Get("policy.accept.connections")); len(got) != 1 || got[0] != f.conn {
			t.Errorf("policy connections = %v; want [%s]", got, f.conn)
		}
		if testenv.Strings(r.Get("policy.issue.audiences")) == nil {
			t.Errorf("policy %s; want empty arrays, not null", r.Body)
		}
		other := newFixture(t, env)
		env.Call(t, "PUT", "/v1/orgs/"+f.org+"/sso/idjag", f.owner.Token,
			map[string]any{"accept": map[string]any{"connections": []string{other.conn}}}).Want(t, 400)
		env.Call(t, "PUT", "/v1/orgs/"+f.org+"/sso/idjag", f.owner.Token,
			map[string]any{"accept": map[string]any{"resources": []string{"not a url"}}}).Want(t, 400)
		env.Call(t, "PUT", "/v1/orgs/"+f.org+"/sso/idjag", f.person.Token, map[string]any{}).Want(t, 403)
		env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/idjag", env.Register(t).Token, nil).Want(t, 404)
	})
}

// TestIDJAGJWKSRereadLimited: ID-JAGs naming key ids the provider's JWK
// Set does not hold make us read it again at most once per
// sso.JWKSMinInterval, however many arrive; valid ones keep verifying
// against the keys held.
func TestIDJAGJWKSRereadLimited(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		exchange(t, env, f.client, f.jag(t, nil), nil).Want(t, 200)
		reads := f.idp.JWKSReads()
		if reads != 1 {
			t.Fatalf("JWK Set reads after one ID-JAG = %d; want 1", reads)
		}
		flood := func() {
			t.Helper()
			for range 20 {
				wantRefused(t, exchange(t, env, f.client, f.idp.SignKID(t, sso.IDJAGType, "unknown-"+testenv.RandomHex(4), f.claims(nil)), nil), "invalid_grant")
			}
		}
		flood()
		if got := f.idp.JWKSReads(); got != reads {
			t.Errorf("JWK Set reads after 20 unknown kids = %d; want %d (none within the interval)", got, reads)
		}
		env.Clock.Advance(sso.JWKSMinInterval)
		flood()
		if got := f.idp.JWKSReads(); got != reads+1 {
			t.Errorf("JWK Set reads after the interval and 20 more = %d; want %d", got, reads+1)
		}
		exchange(t, env, f.client, f.jag(t, nil), nil).Want(t, 200)
		if got := f.idp.JWKSReads(); got != reads+1 {
			t.Errorf("a valid ID-JAG read the JWK Set again (%d reads)", got)
		}
	})
}

// TestIDJAGTwoWorkspacesOneIssuer: when two workspaces' connections
// share the provider and both accept its ID-JAGs, the assertion opens
// access in the workspace its subject is a member of, though the other
// (checked first) has the subject linked: membership chooses among them
// before the assertion is spent.
func TestIDJAGTwoWorkspacesOneIssuer(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newJagFixture(t, env)
		ownerA, orgA := env.Team(t)
		domainA := testenv.Domain()
		env.VerifiedDomain(t, ownerA.Token, orgA, domainA, "")
		connA := env.Call(t, "POST", "/v1/orgs/"+orgA+"/sso", ownerA.Token, map[string]any{"name": "A", "issuer": f.idp.URL,
			"client_id": idpClient, "client_secret": idpSecret, "domains": []string{domainA}}).Want(t, 200).Str("connection.id")
		env.Call(t, "PUT", "/v1/orgs/"+orgA+"/sso/idjag", ownerA.Token, map[string]any{"accept": map[string]any{"connections": []string{connA},
			"clients": []string{f.client}, "resources": []string{f.resource}, "scopes": []string{"tasks:read"}}}).Want(t, 200)
		// A's connection is the older (checked first) and has the subject
		// linked to the person, who is not a member of A.
		env.Exec(t, `UPDATE sso_connections SET created_at = 0 WHERE id = $1`, connA)
		env.Exec(t, `INSERT INTO sso_links (connection_id, subject, user_id, created_at) VALUES ($1, 'shared-sub', $2, 0)`, connA, f.person.UserID)
		r := exchange(t, env, f.client, f.jag(t, map[string]any{"sub": "shared-sub"}), nil).Want(t, 200)
		if org, _, _ := testenv.TokenOrg(t, r.Str("access_token")); org != f.org {
			t.Fatalf("token org = %s; want %s, the workspace the person is a member of", org, f.org)
		}
	})
}
