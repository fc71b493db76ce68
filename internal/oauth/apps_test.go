package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// appWorld is a team org with an owner (who registers applications), a
// member and a stranger, each signed in on a browser of their own.
type appWorld struct {
	env                     *testenv.Env
	owner, member, stranger *testenv.Account
	org                     string
	memberB, strangerB      *testenv.Browser
}

func newAppWorld(t *testing.T, env *testenv.Env) *appWorld {
	w := &appWorld{env: env, owner: env.Register(t), member: env.Register(t), stranger: env.Register(t)}
	w.org = env.TeamOrg(t, "Apps "+testenv.RandomHex(3), [2]string{w.owner.UserID, "owner"}, [2]string{w.member.UserID, "member"})
	w.memberB, w.strangerB = env.NewBrowser(t), env.NewBrowser(t)
	signIn(t, w.memberB, w.member)
	signIn(t, w.strangerB, w.stranger)
	return w
}

// register registers an application with body over the defaults and
// returns its id, client_id and secret.
func (w *appWorld) register(t *testing.T, body map[string]any) (id, clientID, secret string) {
	t.Helper()
	b := map[string]any{"client_name": "Acme Web", "redirect_uris": []string{redirect}}
	for k, v := range body {
		b[k] = v
	}
	r := w.env.Do(t, "POST", "/v1/orgs/"+w.org+"/applications", w.owner.Access, b).Want(t, 200)
	return r.Str("application.id"), r.Str("application.client_id"), r.Str("client_secret")
}

// code runs the browser part for clientID as the member: the consent page
// (or none, for a first-party application), then the redirect's code.
func (w *appWorld) code(t *testing.T, clientID, verifier string) string {
	t.Helper()
	return consentAt(t, w.memberB, oauthConfig(w.env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), w.org).Query().Get("code")
}

func xctx(env *testenv.Env) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
}

// probe authenticates at the revocation endpoint with form and basic
// credentials (user "" for none): 200 when the client authenticated.
func probe(t *testing.T, env *testenv.Env, form url.Values, user, pass string) *testenv.Resp {
	t.Helper()
	if form.Get("token") == "" {
		form.Set("token", "not-a-token")
	}
	req, _ := http.NewRequest("POST", env.URL+"/oauth/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	r, err := env.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAppClientSecret: code + PKCE through golang.org/x/oauth2 for a
// client_secret_basic and a client_secret_post application; the tokens
// act in the application's workspace; a confidential application without
// its secret, with a wrong one or by the other method is 401
// invalid_client (with a Basic challenge when Basic was tried).
func TestAppClientSecret(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		for _, c := range []struct {
			method string
			style  oauth2.AuthStyle
		}{{"client_secret_basic", oauth2.AuthStyleInHeader}, {"client_secret_post", oauth2.AuthStyleInParams}} {
			t.Run(c.method, func(t *testing.T) {
				_, clientID, secret := w.register(t, map[string]any{"token_endpoint_auth_method": c.method})
				cfg := oauthConfig(env, clientID)
				cfg.ClientSecret, cfg.Endpoint.AuthStyle = secret, c.style
				verifier := oauth2.GenerateVerifier()
				tok, err := cfg.Exchange(xctx(env), w.code(t, clientID, verifier), oauth2.VerifierOption(verifier))
				if err != nil {
					t.Fatal(err)
				}
				if org, _, _ := testenv.TokenOrg(t, tok.AccessToken); org != w.org {
					t.Fatalf("token org = %s; want the application's %s", org, w.org)
				}
				env.Do(t, "GET", "/v1/auth/me", tok.AccessToken, nil).Want(t, 200)
				// Refresh authenticates too.
				next, err := cfg.TokenSource(xctx(env), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
				if err != nil || next.AccessToken == "" {
					t.Fatalf("refresh: %v", err)
				}
				// The code needs PKCE and the secret: without the secret, the
				// exchange is refused before the code is looked at.
				verifier = oauth2.GenerateVerifier()
				code := w.code(t, clientID, verifier)
				r := tokenPost(t, env, exchangeForm(clientID, code, verifier))
				wantOAuthError(t, r, 401, "invalid_client")
				wrong := *cfg
				wrong.ClientSecret = secret + "x"
				if _, err := wrong.Exchange(xctx(env), code, oauth2.VerifierOption(verifier)); err == nil || !strings.Contains(err.Error(), "invalid_client") {
					t.Fatalf("wrong secret: %v; want invalid_client", err)
				}
				// The code is still good after the refused attempts.
				if _, err := cfg.Exchange(xctx(env), code, oauth2.VerifierOption(verifier)); err != nil {
					t.Fatal(err)
				}
				// The other method, and a public client's empty Basic password,
				// are refused.
				basic := probe(t, env, url.Values{}, clientID, "")
				wantOAuthError(t, basic, 401, "invalid_client")
				if basic.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 after Basic without WWW-Authenticate")
				}
				if c.method == "client_secret_basic" {
					wantOAuthError(t, probe(t, env, url.Values{"client_id": {clientID}, "client_secret": {secret}}, "", ""), 401, "invalid_client")
					probe(t, env, url.Values{}, clientID, secret).Want(t, 200)
				} else {
					wantOAuthError(t, probe(t, env, url.Values{}, clientID, secret), 401, "invalid_client")
					probe(t, env, url.Values{"client_id": {clientID}, "client_secret": {secret}}, "", "").Want(t, 200)
				}
			})
		}
	})
}

// TestAppPublicClient: a none application names itself by client_id and
// needs PKCE; an authorization error is redirected to it (an
// administrator registered it), and its redirect URIs match exactly (no
// loopback port freedom).
func TestAppPublicClient(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		_, clientID, secret := w.register(t, map[string]any{"token_endpoint_auth_method": "none"})
		if secret != "" {
			t.Fatalf("public application got a secret")
		}
		verifier := oauth2.GenerateVerifier()
		tokenPost(t, env, exchangeForm(clientID, w.code(t, clientID, verifier), verifier)).Want(t, 200)
		wantOAuthError(t, probe(t, env, url.Values{"client_id": {clientID}, "client_secret": {"guess"}}, "", ""), 401, "invalid_client")
		// No PKCE: redirected with invalid_request, even before sign-in.
		noPKCE := oauthConfig(env, clientID).AuthCodeURL("s")
		for _, b := range []*testenv.Browser{w.memberB, env.NewBrowser(t)} {
			p := b.Get(t, noPKCE)
			if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), redirect+"?") || !strings.Contains(p.Location(), "error=invalid_request") {
				t.Fatalf("no PKCE: %d %s", p.Status, p.Location())
			}
		}
		other := strings.Replace(oauthConfig(env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "53682", "53683", 1)
		if p := w.memberB.Get(t, other); p.Status != http.StatusBadRequest || p.Location() != "" {
			t.Fatalf("another loopback port: %d %s; want the error page", p.Status, p.Location())
		}
	})
}

// TestAppMembersOnly: a workspace application signs in its workspace's
// members only: anyone else is sent back with access_denied, before and
// after a forged consent post; a member's consent page offers only the
// application's workspace, and a posted org_id of another workspace is
// ignored.
func TestAppMembersOnly(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		_, clientID, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "none"})
		verifier := oauth2.GenerateVerifier()
		authURL := oauthConfig(env, clientID).AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))
		p := w.strangerB.Get(t, authURL)
		if p.Status != http.StatusSeeOther || !strings.Contains(p.Location(), "error=access_denied") || !strings.Contains(p.Location(), "state=st") {
			t.Fatalf("stranger: %d %s; want access_denied by redirect", p.Status, p.Location())
		}
		form := hiddenFields(w.memberB.Get(t, authURL).Body)
		form.Set("decision", "approve")
		form.Set("org_id", w.stranger.OrgID)
		if p := w.strangerB.Post(t, "/oauth/authorize", form); !strings.Contains(p.Location(), "error=access_denied") {
			t.Fatalf("stranger's consent post: %d %s", p.Status, p.Location())
		}
		page := w.memberB.Get(t, authURL)
		if strings.Contains(page.Body, w.member.OrgID) {
			t.Fatalf("the consent page offers the member's personal workspace")
		}
		form.Set("org_id", w.member.OrgID)
		back, _ := url.Parse(w.memberB.Post(t, "/oauth/authorize", form).Location())
		r := tokenPost(t, env, exchangeForm(clientID, back.Query().Get("code"), verifier)).Want(t, 200)
		if org, _, _ := testenv.TokenOrg(t, r.Str("access_token")); org != w.org {
			t.Fatalf("token org = %s; want %s", org, w.org)
		}
	})
}

// TestAppFirstParty: a first-party application skips the consent page; a
// third-party one shows it.
func TestAppFirstParty(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		_, first, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "none", "first_party": true})
		_, third, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "none"})
		verifier := oauth2.GenerateVerifier()
		p := w.memberB.Get(t, oauthConfig(env, first).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
		if p.Status != http.StatusSeeOther || !strings.Contains(p.Location(), "code=") {
			t.Fatalf("first party: %d %s; want straight back with a code", p.Status, p.Location())
		}
		back, _ := url.Parse(p.Location())
		tokenPost(t, env, exchangeForm(first, back.Query().Get("code"), verifier)).Want(t, 200)
		if p := w.memberB.Get(t, oauthConfig(env, third).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))); p.Status != 200 || !strings.Contains(p.Body, `name="decision"`) {
			t.Fatalf("third party: %d; want the consent page", p.Status)
		}
		// A stranger is refused by a first-party application too.
		if p := w.strangerB.Get(t, oauthConfig(env, first).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))); !strings.Contains(p.Location(), "error=access_denied") {
			t.Fatalf("stranger at a first-party app: %d %s", p.Status, p.Location())
		}
	})
}

// TestAppSecretRotation: after a rotation with grace the old secret
// works until the grace ends (injected clock), the new one at once; a
// rotation without grace ends the old secret now.
func TestAppSecretRotation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		id, clientID, old := w.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_basic"})
		rotate := func(grace int) string {
			return env.Do(t, "POST", "/v1/orgs/"+w.org+"/applications/"+id+"/secret", w.owner.Access, map[string]any{"grace_seconds": grace}).Want(t, 200).Str("client_secret")
		}
		fresh := rotate(3600)
		probe(t, env, url.Values{}, clientID, old).Want(t, 200)
		probe(t, env, url.Values{}, clientID, fresh).Want(t, 200)
		env.Clock.Advance(3599 * time.Second)
		probe(t, env, url.Values{}, clientID, old).Want(t, 200)
		env.Clock.Advance(2 * time.Second)
		wantOAuthError(t, probe(t, env, url.Values{}, clientID, old), 401, "invalid_client")
		probe(t, env, url.Values{}, clientID, fresh).Want(t, 200)
		// Rotations need a recent sign-in: sign the owner in again.
		w.owner.Access = env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": w.owner.Email, "password": w.owner.Password}).Want(t, 200).Str("access_token")
		newest := rotate(0)
		wantOAuthError(t, probe(t, env, url.Values{}, clientID, fresh), 401, "invalid_client")
		probe(t, env, url.Values{}, clientID, newest).Want(t, 200)
	})
}

// TestAppDeleted: deleting an application ends its grants and sessions at
// once: its refresh token is refused, its access token 401 everywhere,
// its client_id unknown.
func TestAppDeleted(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		id, clientID, secret := w.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_post"})
		cfg := oauthConfig(env, clientID)
		cfg.ClientSecret, cfg.Endpoint.AuthStyle = secret, oauth2.AuthStyleInParams
		verifier := oauth2.GenerateVerifier()
		tok, err := cfg.Exchange(xctx(env), w.code(t, clientID, verifier), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		env.Do(t, "GET", "/v1/auth/me", tok.AccessToken, nil).Want(t, 200)
		env.Do(t, "DELETE", "/v1/orgs/"+w.org+"/applications/"+id, w.owner.Access, nil).Want(t, 200)
		wantRefusedWithin2s(t, tok.AccessToken, env)
		r := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}, "client_secret": {secret}})
		wantOAuthError(t, r, 401, "invalid_client")
		if p := w.memberB.Get(t, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))); p.Status != http.StatusBadRequest {
			t.Fatalf("authorize for a deleted application: %d", p.Status)
		}
	})
}

// TestAppRevocation: a confidential application revokes its own token
// with its secret; with a wrong secret it is refused 401 and the token
// keeps working.
func TestAppRevocation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		_, clientID, secret := w.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_basic"})
		cfg := oauthConfig(env, clientID)
		cfg.ClientSecret, cfg.Endpoint.AuthStyle = secret, oauth2.AuthStyleInHeader
		verifier := oauth2.GenerateVerifier()
		tok, err := cfg.Exchange(xctx(env), w.code(t, clientID, verifier), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, probe(t, env, url.Values{"token": {tok.RefreshToken}}, clientID, "wrong"), 401, "invalid_client")
		wantOAuthError(t, probe(t, env, url.Values{"token": {tok.RefreshToken}, "client_id": {clientID}}, "", ""), 401, "invalid_client")
		env.Do(t, "GET", "/v1/auth/me", tok.AccessToken, nil).Want(t, 200)
		wantRevokeOK(t, probe(t, env, url.Values{"token": {tok.RefreshToken}}, clientID, secret))
		wantRefusedWithin2s(t, tok.AccessToken, env)
	})
}

// assertionKeys are a private_key_jwt application's keys in a test.
type assertionKeys struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newAssertionKeys(t testing.TB) *assertionKeys {
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &assertionKeys{rsa: r, ec: e}
}

// jwks is the public JWK set of k.
func (k *assertionKeys) jwks() map[string]any {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &k.rsa.PublicKey, KeyID: "r1", Algorithm: "RS256", Use: "sig"},
		{Key: &k.ec.PublicKey, KeyID: "e1", Algorithm: "ES256", Use: "sig"}}}
	b, _ := json.Marshal(set)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// sign signs claims as an assertion with alg (RS256 or ES256).
func (k *assertionKeys) sign(t testing.TB, alg jose.SignatureAlgorithm, claims any) string {
	t.Helper()
	key, kid := any(k.rsa), "r1"
	if alg == jose.ES256 {
		key, kid = k.ec, "e1"
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// assertionForm is a token request authenticated by assertion.
func assertionForm(base url.Values, assertion string) url.Values {
	f := url.Values{}
	for k, v := range base {
		f[k] = v
	}
	f.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
	f.Set("client_assertion", assertion)
	return f
}

// TestAppPrivateKeyJWT: RFC 7523 client authentication by an inline JWKS
// (RS256 and ES256) and by a jwks_uri fetched over TLS; every bad
// assertion is 401 invalid_client, never a 500: tampered signature, wrong
// aud, expired, exp too far ahead, no exp, no jti, a replayed jti, alg
// none, HS256 keyed with the public key, another client's id, a key not
// in the set.
func TestAppPrivateKeyJWT(t *testing.T) {
	keys := newAssertionKeys(t)
	var jwksHits atomic.Int32
	var badHits atomic.Int32
	host := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/jwks.json":
			jwksHits.Add(1)
			json.NewEncoder(w).Encode(keys.jwks())
			return
		case "/huge.json":
			set := keys.jwks()
			set["padding"] = strings.Repeat("x", 20<<10)
			json.NewEncoder(w).Encode(set)
		case "/private.json":
			b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: keys.rsa, KeyID: "r1", Algorithm: "RS256"}}})
			w.Write(b)
		default:
			w.Write([]byte(`{"keys": [`))
		}
		badHits.Add(1)
	}))
	t.Cleanup(host.Close)
	roots := x509.NewCertPool()
	roots.AddCert(host.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: roots, AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		jwksHits.Store(0)
		w := newAppWorld(t, env)
		_, inline, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "private_key_jwt", "jwks": keys.jwks()})
		_, byURI, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": host.URL + "/jwks.json"})
		_, other, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "private_key_jwt", "jwks": newAssertionKeys(t).jwks()})
		now := env.Clock.Now()
		claims := func(client string, mod func(c map[string]any)) map[string]any {
			c := map[string]any{"iss": client, "sub": client, "aud": env.URL + "/oauth/token", "exp": now.Add(2 * time.Minute).Unix(),
				"iat": now.Unix(), "jti": testenv.RandomHex(8)}
			if mod != nil {
				mod(c)
			}
			return c
		}
		for _, client := range []string{inline, byURI} {
			for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256} {
				verifier := oauth2.GenerateVerifier()
				form := assertionForm(url.Values{"grant_type": {"authorization_code"}, "code": {w.code(t, client, verifier)},
					"code_verifier": {verifier}, "redirect_uri": {redirect}}, keys.sign(t, alg, claims(client, nil)))
				r := tokenPost(t, env, form).Want(t, 200)
				if org, _, _ := testenv.TokenOrg(t, r.Str("access_token")); org != w.org {
					t.Fatalf("token org = %s", org)
				}
			}
		}
		if n := jwksHits.Load(); n != 1 {
			t.Errorf("jwks_uri fetched %d times; want once (cached)", n)
		}

		good := keys.sign(t, jose.RS256, claims(inline, nil))
		probe(t, env, assertionForm(url.Values{}, good), "", "").Want(t, 200)
		tampered := good[:len(good)-4] + "AAAA"
		none := testenv.ForgeJWT(t, map[string]any{"alg": "none", "typ": "JWT"}, claims(inline, nil), "none", nil)
		// The classic confusion: the published public key (PEM) as an HMAC
		// secret.
		pubDER, _ := x509.MarshalPKIXPublicKey(&keys.rsa.PublicKey)
		pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
		hs := testenv.ForgeJWT(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": "r1"}, claims(inline, nil), "HS256", pubPEM)
		stranger := newAssertionKeys(t)
		bad := map[string]string{
			"replayed jti":              good,
			"tampered signature":        tampered,
			"alg none":                  none,
			"HS256 with the public key": hs,
			"wrong aud":                 keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { c["aud"] = "https://elsewhere.example/token" })),
			"expired":                   keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() })),
			"exp too far ahead":         keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { c["exp"] = now.Add(time.Hour).Unix() })),
			"no exp":                    keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { delete(c, "exp") })),
			"no jti":                    keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { delete(c, "jti") })),
			"iss differs":               keys.sign(t, jose.RS256, claims(inline, func(c map[string]any) { c["iss"] = other })),
			"another client":            keys.sign(t, jose.RS256, claims(other, nil)),
			"key not in the set":        stranger.sign(t, jose.RS256, claims(inline, nil)),
			"not a JWT":                 "abc.def",
			"empty":                     "",
		}
		for name, a := range bad {
			t.Run(name, func(t *testing.T) {
				wantOAuthError(t, probe(t, env, assertionForm(url.Values{}, a), "", ""), 401, "invalid_client")
			})
		}
		// A jwks_uri answering an oversized, malformed or private key set
		// authenticates nobody, and a failed fetch is not repeated at once.
		for _, path := range []string{"/huge.json", "/bad.json", "/private.json"} {
			_, app, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": host.URL + path})
			before := badHits.Load()
			for i := 0; i < 3; i++ {
				wantOAuthError(t, probe(t, env, assertionForm(url.Values{}, keys.sign(t, jose.RS256, claims(app, nil))), "", ""), 401, "invalid_client")
			}
			if n := badHits.Load() - before; n != 1 {
				t.Errorf("%s fetched %d times for 3 assertions; want once", path, n)
			}
		}
		// The assertion's subject must be the client_id sent beside it, and
		// the assertion type must be RFC 7523's.
		wantOAuthError(t, probe(t, env, assertionForm(url.Values{"client_id": {other}}, keys.sign(t, jose.RS256, claims(inline, nil))), "", ""), 401, "invalid_client")
		f := assertionForm(url.Values{}, keys.sign(t, jose.RS256, claims(inline, nil)))
		f.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:saml2-bearer")
		wantOAuthError(t, probe(t, env, f, "", ""), 401, "invalid_client")
		// A private_key_jwt application cannot use a secret or nothing.
		wantOAuthError(t, probe(t, env, url.Values{"client_id": {inline}}, "", ""), 401, "invalid_client")
		// Another instance on the same database refuses a jti this one
		// accepted.
		other2 := env.Another(t)
		once := keys.sign(t, jose.ES256, claims(inline, nil))
		probe(t, env, assertionForm(url.Values{}, once), "", "").Want(t, 200)
		wantOAuthError(t, probe(t, other2, assertionForm(url.Values{}, once), "", ""), 401, "invalid_client")
		probe(t, other2, assertionForm(url.Values{}, keys.sign(t, jose.ES256, claims(inline, nil))), "", "").Want(t, 200)
		// A jti is single use across instances: the database refuses it
		// (the replay above), and stays refused after the clock moves on
		// less than its exp.
		env.Clock.Advance(time.Minute)
		wantOAuthError(t, probe(t, env, assertionForm(url.Values{}, good), "", ""), 401, "invalid_client")
	})
}

// TestAppPromptNone: prompt=none for a workspace application never shows
// a page. A signed-in member of a first-party application's workspace
// gets a code straight away; a third-party application answers
// consent_required; without a session, login_required; a signed-in
// non-member, access_denied (as without prompt=none); a first-party
// member who must sign in again (max_age=0) login_required, and one the
// workspace's two-factor policy refuses interaction_required; all by
// redirect with the state, never to an unregistered redirect URI.
func TestAppPromptNone(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newAppWorld(t, env)
		_, first, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "none", "first_party": true})
		_, third, _ := w.register(t, map[string]any{"token_endpoint_auth_method": "none"})
		_, firstSecret, secret := w.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_basic", "first_party": true})
		none := url.Values{"prompt": {"none"}}
		anon := env.NewBrowser(t)

		t.Run("a member at a first-party application", func(t *testing.T) {
			for _, c := range []struct{ id, secret string }{{first, ""}, {firstSecret, secret}} {
				verifier := oauth2.GenerateVerifier()
				p := w.memberB.Get(t, oauthConfig(env, c.id).AuthCodeURL("xyz", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("prompt", "none")))
				if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), redirect+"?") {
					t.Fatalf("prompt=none: %d %q %.200s; want a redirect with a code", p.Status, p.Location(), p.Body)
				}
				back, _ := url.Parse(p.Location())
				if q := back.Query(); q.Get("code") == "" || q.Get("state") != "xyz" || q.Get("iss") != env.URL || q.Get("error") != "" {
					t.Fatalf("prompt=none redirect %s; want code, state and iss", back)
				}
				cfg := oauthConfig(env, c.id)
				cfg.ClientSecret, cfg.Endpoint.AuthStyle = c.secret, oauth2.AuthStyleInHeader
				tok, err := cfg.Exchange(xctx(env), back.Query().Get("code"), oauth2.VerifierOption(verifier))
				if err != nil {
					t.Fatal(err)
				}
				if org, _, _ := testenv.TokenOrg(t, tok.AccessToken); org != w.org {
					t.Fatalf("token org = %s; want %s", org, w.org)
				}
			}
		})
		t.Run("a member at a third-party application", func(t *testing.T) {
			wantErrorRedirect(t, w.memberB.Get(t, authorizeURL(env, third, none)), env, "consent_required")
			// The consent page still works without prompt=none.
			if p := w.memberB.Get(t, authorizeURL(env, third, nil)); p.Status != 200 || !strings.Contains(p.Body, `name="decision"`) {
				t.Fatalf("third party without prompt: %d; want the consent page", p.Status)
			}
			// A consent post that carries prompt=none (no page was shown for
			// it) approves nothing.
			form := hiddenFields(w.memberB.Get(t, authorizeURL(env, third, nil)).Body)
			form.Set("prompt", "none")
			form.Set("decision", "approve")
			wantErrorRedirect(t, w.memberB.Post(t, "/oauth/authorize", form), env, "consent_required")
		})
		t.Run("no session", func(t *testing.T) {
			for _, c := range []string{first, third, firstSecret} {
				wantErrorRedirect(t, anon.Get(t, authorizeURL(env, c, none)), env, "login_required")
			}
		})
		t.Run("a non-member", func(t *testing.T) {
			for _, c := range []string{first, third} {
				wantErrorRedirect(t, w.strangerB.Get(t, authorizeURL(env, c, none)), env, "access_denied")
			}
		})
		t.Run("never to an unregistered redirect URI", func(t *testing.T) {
			evil := url.Values{"prompt": {"none"}, "redirect_uri": {"https://evil.example/cb"}}
			for _, b := range []*testenv.Browser{anon, w.memberB, w.strangerB} {
				wantErrorPage(t, b.Get(t, authorizeURL(env, first, evil)))
			}
		})
		t.Run("a fresh sign-in needed", func(t *testing.T) {
			wantErrorRedirect(t, w.memberB.Get(t, authorizeURL(env, first, url.Values{"prompt": {"none"}, "max_age": {"0"}})), env, "login_required")
		})
		t.Run("the workspace's two-factor policy", func(t *testing.T) {
			env.Exec(t, `UPDATE orgs SET require_mfa = TRUE WHERE id = $1`, w.org)
			env.Clock.Advance(3 * time.Second) // past the standing cache
			wantErrorRedirect(t, w.memberB.Get(t, authorizeURL(env, first, none)), env, "interaction_required")
			// Without prompt=none the page says why.
			if p := w.memberB.Get(t, authorizeURL(env, first, nil)); p.Location() != "" || !strings.Contains(p.Body, "two-factor") {
				t.Fatalf("first party under the policy without prompt: %d %q; want the consent page saying why", p.Status, p.Location())
			}
		})
	})
}
