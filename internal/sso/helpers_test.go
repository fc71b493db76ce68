package sso_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// provider is an OpenID provider for the tests: discovery, a JWK Set, an
// authorization endpoint that approves at once, and a token endpoint
// that checks the client secret and PKCE and signs ID tokens with a real
// RSA key. Claims set before a sign-in change that sign-in's ID token.
type provider struct {
	*httptest.Server
	key    *rsa.PrivateKey
	client string
	secret string

	mu    sync.Mutex
	codes map[string]grant
	// next overrides claims of the next ID tokens (nil values delete).
	next map[string]any
	// signWith, when set, signs ID tokens with another key (not in the JWKS).
	signWith *rsa.PrivateKey
}

type grant struct {
	nonce, challenge, redirect string
}

const idpClient, idpSecret = "acme-client", "acme-secret-value"

func newProvider(t *testing.T) *provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{key: key, client: idpClient, secret: idpSecret, codes: map[string]grant{}}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != p.client || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || q.Get("nonce") == "" {
			http.Error(w, "bad authorization request", 400)
			return
		}
		code := testenv.RandomHex(8)
		p.mu.Lock()
		p.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		p.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
		}
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		p.mu.Lock()
		g, found := p.codes[r.PostFormValue("code")]
		delete(p.codes, r.PostFormValue("code"))
		next := p.next
		signer := p.signWith
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if id != p.client || secret != p.secret || !found || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge ||
			r.PostFormValue("redirect_uri") != g.redirect {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		now := time.Now()
		claims := map[string]any{"iss": p.URL, "sub": "sub-" + testenv.RandomHex(4), "aud": p.client, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
			"nonce": g.nonce, "email_verified": true}
		for k, v := range next {
			if v == nil {
				delete(claims, k)
			} else {
				claims[k] = v
			}
		}
		if signer == nil {
			signer = p.key
		}
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: signer}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		raw, err := jwt.Signed(sig).Claims(claims).Serialize()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + testenv.RandomHex(4), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
	})
	return p
}

// as sets the claims of the next ID tokens.
func (p *provider) as(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = claims
}

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

func (b *browser) get(t *testing.T, raw string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
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
