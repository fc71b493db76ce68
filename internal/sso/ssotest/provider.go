// Package ssotest is an OpenID provider for tests of other packages (the
// pages' Chromium tests of social sign-in and home-realm discovery):
// discovery, a JWK Set, an authorization endpoint that approves at once,
// and a token endpoint that checks the client and PKCE and signs ID tokens
// with a real RSA key.
package ssotest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The client every Provider accepts.
const (
	Client = "test-client"
	Secret = "test-client-secret"
)

// Provider is the test OpenID provider; Claims set the next ID tokens'.
type Provider struct {
	*httptest.Server
	key *rsa.PrivateKey

	mu     sync.Mutex
	codes  map[string]grant
	claims map[string]any
	// signWith, when set, signs ID tokens with a key not in the JWKS.
	signWith *rsa.PrivateKey
	// jwksReads counts the reads of the JWK Set.
	jwksReads atomic.Int64
	// userInfo, when set, is served at the UserInfo endpoint, which
	// discovery then names.
	userInfo map[string]any
}

type grant struct{ nonce, challenge, redirect string }

func random() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// New starts a provider, closed when t ends.
func New(t testing.TB) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{key: key, codes: map[string]grant{}}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		d := map[string]any{"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}}
		p.mu.Lock()
		if p.userInfo != nil {
			d["userinfo_endpoint"] = p.URL + "/userinfo"
		}
		p.mu.Unlock()
		json.NewEncoder(w).Encode(d)
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		ui := p.userInfo
		p.mu.Unlock()
		if ui == nil || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ui)
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		p.jwksReads.Add(1)
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	return p
}

// SetClaims sets the claims of the next ID tokens (sub, email, …); a nil
// value leaves that claim out.
func (p *Provider) SetClaims(c map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = c
}

// SignWith makes the next ID tokens signed with key, which the JWKS does
// not hold (nil: the provider's own key again).
func (p *Provider) SignWith(key *rsa.PrivateKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signWith = key
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != Client || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || q.Get("nonce") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := random()
	p.mu.Lock()
	p.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	p.mu.Unlock()
	http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	id, _ = url.QueryUnescape(id)
	secret, _ = url.QueryUnescape(secret)
	p.mu.Lock()
	g, found := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code"))
	extra, key := p.claims, p.signWith
	p.mu.Unlock()
	if key == nil {
		key = p.key
	}
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	w.Header().Set("Content-Type", "application/json")
	if id != Client || secret != Secret || !found || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostFormValue("redirect_uri") != g.redirect {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": p.URL, "sub": "sub-" + random(), "aud": Client, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"nonce": g.nonce, "email_verified": true}
	for k, v := range extra {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	raw, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + random(), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
}

// SetUserInfo makes the provider answer c at a UserInfo endpoint, named
// by discovery documents read from then on.
func (p *Provider) SetUserInfo(c map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.userInfo = c
}

// JWKSReads is how many times the JWK Set was read.
func (p *Provider) JWKSReads() int64 { return p.jwksReads.Load() }

// Sign signs claims as a JWT whose header has typ, with the provider's
// key (key id k1) or the one SignWith set: an ID-JAG as the provider
// would issue it, or a forgery.
func (p *Provider) Sign(t testing.TB, typ string, claims map[string]any) string {
	t.Helper()
	return p.SignKID(t, typ, "k1", claims)
}

// SignKID is Sign with the key id kid in the header.
func (p *Provider) SignKID(t testing.TB, typ, kid string, claims map[string]any) string {
	t.Helper()
	return p.SignAlg(t, typ, kid, jose.RS256, claims)
}

// SignAlg is SignKID with the provider's key used with alg (an RSA
// algorithm), which the discovery document need not announce.
func (p *Provider) SignAlg(t testing.TB, typ, kid string, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	p.mu.Lock()
	key := p.signWith
	p.mu.Unlock()
	if key == nil {
		key = p.key
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
