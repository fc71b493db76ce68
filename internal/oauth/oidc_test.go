package oauth_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// relyingParty is an OpenID Connect relying party built on go-oidc and
// x/oauth2, as a web app putting "Sign in with Gatehouse" on its pages
// would be.
type relyingParty struct {
	env      *testenv.Env
	ctx      context.Context
	provider *oidc.Provider
	cfg      *oauth2.Config
}

// newRelyingParty discovers the provider (issuer checked against the
// discovery URL by go-oidc) for client clientID.
func newRelyingParty(t *testing.T, env *testenv.Env, clientID string, scopes ...string) *relyingParty {
	t.Helper()
	ctx := oidc.ClientContext(context.Background(), env.Client)
	ctx = context.WithValue(ctx, oauth2.HTTPClient, env.Client)
	p, err := oidc.NewProvider(ctx, env.URL)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return &relyingParty{env: env, ctx: ctx, provider: p,
		cfg: &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Endpoint: p.Endpoint(), Scopes: scopes}}
}

// verifier checks ID tokens for clientID on the test clock.
func (rp *relyingParty) verifier(clientID string, algs ...string) *oidc.IDTokenVerifier {
	return rp.provider.Verifier(&oidc.Config{ClientID: clientID, Now: rp.env.Clock.Now, SupportedSigningAlgs: algs})
}

// login runs the code flow with PKCE and nonce in signed-in browser b,
// approving orgID, and returns the tokens.
func (rp *relyingParty) login(t *testing.T, b *testenv.Browser, orgID, nonce string, extra ...oauth2.AuthCodeOption) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	opts := append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}, extra...)
	if nonce != "" {
		opts = append(opts, oidc.Nonce(nonce))
	}
	back := consentAt(t, b, rp.cfg.AuthCodeURL("st", opts...), orgID)
	tok, err := rp.cfg.Exchange(rp.ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func rawIDToken(t *testing.T, tok *oauth2.Token) string {
	t.Helper()
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		t.Fatalf("no id_token in the token response")
	}
	return raw
}

// TestOIDCRelyingParty: discovery, code + PKCE + nonce, the ID token
// verified against the JWK Set, UserInfo by scope, and refresh, through
// go-oidc and x/oauth2 for a dynamically registered public client.
func TestOIDCRelyingParty(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"client_name": "Web App", "redirect_uris": []string{redirect}})
		rp := newRelyingParty(t, env, clientID, oidc.ScopeOpenID, "profile", "email")
		var claims struct {
			Supported []string `json:"claims_supported"`
			Scopes    []string `json:"scopes_supported"`
			Userinfo  string   `json:"userinfo_endpoint"`
			Algs      []string `json:"id_token_signing_alg_values_supported"`
		}
		if err := rp.provider.Claims(&claims); err != nil {
			t.Fatal(err)
		}
		if claims.Userinfo != env.URL+"/oauth/userinfo" || !slices.Contains(claims.Scopes, "offline_access") ||
			!slices.Equal(claims.Algs, []string{"RS256", "ES256"}) || !slices.Contains(claims.Supported, "at_hash") {
			t.Fatalf("discovery = %+v", claims)
		}

		b := env.NewBrowser(t)
		signIn(t, b, a)
		signedInAt := env.Clock.Now()
		env.Clock.Advance(time.Minute)
		tok := rp.login(t, b, a.OrgID, "n-0S6_WzA2Mj")
		raw := rawIDToken(t, tok)
		idt, err := rp.verifier(clientID).Verify(rp.ctx, raw)
		if err != nil {
			t.Fatalf("verify ID token: %v", err)
		}
		if idt.Nonce != "n-0S6_WzA2Mj" || idt.Subject != a.UserID || idt.Issuer != env.URL {
			t.Fatalf("ID token = %+v", idt)
		}
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			t.Fatalf("at_hash: %v", err)
		}
		c := testenv.Claims(t, raw)
		if c["azp"] != clientID || c["aud"] != clientID || c["sid"] != testenv.Claims(t, tok.AccessToken)["sid"] ||
			int64(c["auth_time"].(float64)) != signedInAt.Unix() || c["acr"] != "aal1" || !slices.Equal(anyStrings(c["amr"]), []string{"pwd"}) {
			t.Fatalf("ID token claims = %v", c)
		}
		if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 3600 || int64(iat) != env.Clock.Now().Unix() {
			t.Fatalf("iat %v exp %v; want now and an hour later", iat, exp)
		}
		if h := jwtHeader(t, raw); h["alg"] != "RS256" || h["kid"] == "" {
			t.Fatalf("ID token header = %v; want RS256 with a kid", h)
		}

		info, err := rp.provider.UserInfo(rp.ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			t.Fatal(err)
		}
		var profile struct {
			Name string `json:"name"`
		}
		info.Claims(&profile)
		if info.Subject != a.UserID || !strings.EqualFold(info.Email, a.Email) || profile.Name == "" {
			t.Fatalf("userinfo = %+v %+v", info, profile)
		}
		post := env.Do(t, "POST", "/oauth/userinfo", tok.AccessToken, nil).Want(t, 200)
		if post.Str("sub") != a.UserID {
			t.Fatalf("POST userinfo = %s", post.Body)
		}

		// Refresh: a new ID token, same subject, session and auth_time,
		// no nonce (Core §12.2); the old refresh token is spent.
		env.Clock.Advance(2 * time.Hour)
		tok.Expiry = time.Now().Add(-time.Minute)
		fresh, err := rp.cfg.TokenSource(rp.ctx, tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		raw2 := rawIDToken(t, fresh)
		idt2, err := rp.verifier(clientID).Verify(rp.ctx, raw2)
		if err != nil {
			t.Fatalf("verify refreshed ID token: %v", err)
		}
		if err := idt2.VerifyAccessToken(fresh.AccessToken); err != nil {
			t.Fatal(err)
		}
		c2 := testenv.Claims(t, raw2)
		if idt2.Subject != a.UserID || c2["nonce"] != nil || c2["auth_time"] != c["auth_time"] || c2["sid"] != c["sid"] {
			t.Fatalf("refreshed ID token claims = %v; first %v", c2, c)
		}
		// The old ID token has expired meanwhile.
		if _, err := rp.verifier(clientID).Verify(rp.ctx, raw); err == nil {
			t.Fatalf("an ID token two hours old verified")
		}
	})
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func jwtHeader(t *testing.T, raw string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOIDCWithoutOpenID: without openid nothing changes: no ID token, and
// UserInfo refuses the token (403 insufficient_scope); tokens not issued
// under a grant are refused 401 invalid_token.
func TestOIDCWithoutOpenID(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		rp := newRelyingParty(t, env, clientID)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		tok := rp.login(t, b, a.OrgID, "")
		if tok.Extra("id_token") != nil || tok.RefreshToken == "" {
			t.Fatalf("token without openid = %+v; want no id_token, a refresh token", tok)
		}
		r := env.Do(t, "GET", "/oauth/userinfo", tok.AccessToken, nil).Want(t, http.StatusForbidden)
		if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="openid"`) {
			t.Fatalf("WWW-Authenticate = %q", h)
		}
		wantOAuthError(t, r, 403, "insufficient_scope")
		for name, bearer := range map[string]string{"sign-in token": a.Access, "forged": "eyJhbGciOiJIUzI1NiJ9.e30.x"} {
			r := env.Do(t, "GET", "/oauth/userinfo", bearer, nil).Want(t, http.StatusUnauthorized)
			if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, `Bearer error="invalid_token"`) {
				t.Fatalf("%s: WWW-Authenticate = %q", name, h)
			}
		}
		if r := env.Do(t, "GET", "/oauth/userinfo", "", nil).Want(t, http.StatusUnauthorized); r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("no token: WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
	})
}

// TestOIDCDeviceAndES256: the device flow with openid returns an ID token
// too, and a client registered for ES256 gets ES256 ID tokens.
func TestOIDCDeviceAndES256(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"client_name": "tv", "grant_types": []string{deviceGrant, "refresh_token"},
			"id_token_signed_response_alg": "ES256"})
		rp := newRelyingParty(t, env, clientID, oidc.ScopeOpenID)
		ctx, cancel := context.WithTimeout(rp.ctx, 20*time.Second)
		defer cancel()
		da, err := rp.cfg.DeviceAuth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := env.NewBrowser(t)
		signIn(t, b, a)
		if p := decideDevice(t, b, da.VerificationURIComplete, "approve", a.OrgID); p.Status != 200 {
			t.Fatalf("approve: %d %s", p.Status, p.Body)
		}
		tok, err := rp.cfg.DeviceAccessToken(ctx, da)
		if err != nil {
			t.Fatal(err)
		}
		raw := rawIDToken(t, tok)
		if h := jwtHeader(t, raw); h["alg"] != "ES256" {
			t.Fatalf("header = %v; want ES256", h)
		}
		if _, err := rp.verifier(clientID, "RS256").Verify(ctx, raw); err == nil {
			t.Fatalf("an ES256 ID token verified by a verifier for RS256 only")
		}
		idt, err := rp.verifier(clientID, "ES256").Verify(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil || idt.Subject != a.UserID || idt.Nonce != "" {
			t.Fatalf("device ID token %+v, at_hash %v", idt, err)
		}
	})
}

// TestOIDCAttacks: what a relying party checks must be there to check:
// each ID token carries its own request's nonce (none without one), names
// its client as audience, and binds its access token (at_hash).
func TestOIDCAttacks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		other := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		rp := newRelyingParty(t, env, clientID, oidc.ScopeOpenID)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		first := rp.login(t, b, a.OrgID, "nonce-one")
		second := rp.login(t, b, a.OrgID, "nonce-two")
		bare := rp.login(t, b, a.OrgID, "")
		v := rp.verifier(clientID)
		id1, err := v.Verify(rp.ctx, rawIDToken(t, first))
		if err != nil {
			t.Fatal(err)
		}
		id2, err := v.Verify(rp.ctx, rawIDToken(t, second))
		if err != nil {
			t.Fatal(err)
		}
		idBare, err := v.Verify(rp.ctx, rawIDToken(t, bare))
		if err != nil {
			t.Fatal(err)
		}
		// Replaying flow one's ID token into flow two fails the RP's
		// nonce check; a request without nonce gets an ID token without.
		if id1.Nonce != "nonce-one" || id2.Nonce != "nonce-two" || idBare.Nonce != "" {
			t.Fatalf("nonces %q %q %q", id1.Nonce, id2.Nonce, idBare.Nonce)
		}
		// Another client's verifier refuses the token (aud).
		if _, err := rp.verifier(other).Verify(rp.ctx, rawIDToken(t, first)); err == nil || !strings.Contains(err.Error(), "audience") {
			t.Fatalf("ID token of %s verified for %s: %v", clientID, other, err)
		}
		// at_hash binds the ID token to its own access token.
		if err := id1.VerifyAccessToken(second.AccessToken); err == nil {
			t.Fatalf("at_hash matched another flow's access token")
		}
		// A tampered ID token does not verify.
		parts := strings.Split(rawIDToken(t, first), ".")
		var c map[string]any
		p, _ := base64.RawURLEncoding.DecodeString(parts[1])
		json.Unmarshal(p, &c)
		c["sub"] = "someone-else"
		p, _ = json.Marshal(c)
		if _, err := v.Verify(rp.ctx, parts[0]+"."+base64.RawURLEncoding.EncodeToString(p)+"."+parts[2]); err == nil {
			t.Fatalf("a tampered ID token verified")
		}
	})
}

// authorizeURL is an authorization request of clientID with PKCE and the
// extra parameters.
func authorizeURL(env *testenv.Env, clientID string, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"},
		"scope": {"openid"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}
	for k, v := range extra {
		q[k] = v
	}
	return env.URL + "/oauth/authorize?" + q.Encode()
}

// wantErrorRedirect checks an authorization error sent back to the client.
func wantErrorRedirect(t *testing.T, p *testenv.Page, env *testenv.Env, code string) {
	t.Helper()
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), redirect+"?") {
		t.Fatalf("got %d to %q, body %.300s; want a redirect to the client with %s", p.Status, p.Location(), p.Body, code)
	}
	u, _ := url.Parse(p.Location())
	if q := u.Query(); q.Get("error") != code || q.Get("state") != "xyz" || q.Get("iss") != env.URL {
		t.Fatalf("redirect %s; want error=%s, state=xyz, iss", p.Location(), code)
	}
}

// wantErrorPage checks an authorization refusal shown to the person,
// never redirected.
func wantErrorPage(t *testing.T, p *testenv.Page) {
	t.Helper()
	if p.Status != http.StatusBadRequest || p.Location() != "" {
		t.Fatalf("got %d to %q; want the error page", p.Status, p.Location())
	}
}

// TestOIDCPromptNone: prompt=none never shows a page. Before sign-in a
// dynamically registered client gets the error page (no redirect to a
// URI anyone could register, RFC 9700 §4.11.2) and a client ID metadata
// document client the login_required redirect; signed in, consent is
// still owed: consent_required.
func TestOIDCPromptNone(t *testing.T) {
	host := newMetadataHost(t)
	roots := x509.NewCertPool()
	roots.AddCert(host.srv.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: roots, AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		dcr := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		cimd := host.srv.URL + "/cached.json"
		none := url.Values{"prompt": {"none"}}
		anon := env.NewBrowser(t)
		wantErrorPage(t, anon.Get(t, authorizeURL(env, dcr, none)))
		wantErrorRedirect(t, anon.Get(t, authorizeURL(env, cimd, none)), env, "login_required")
		// Never to an unregistered redirect URI, whoever the client.
		evil := url.Values{"prompt": {"none"}, "redirect_uri": {"https://evil.example/cb"}}
		wantErrorPage(t, anon.Get(t, authorizeURL(env, cimd, evil)))

		b := env.NewBrowser(t)
		signIn(t, b, a)
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, dcr, none)), env, "consent_required")
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, cimd, none)), env, "consent_required")
		signIn(t, b, a)
		wantErrorPage(t, b.Get(t, authorizeURL(env, dcr, evil)))
		// max_age exceeded with prompt=none: login_required.
		env.Clock.Advance(10 * time.Minute)
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, dcr, url.Values{"prompt": {"none"}, "max_age": {"60"}})), env, "login_required")
	})
}

// TestOIDCAuthorizeParameters: prompt values, max_age, login_hint and
// request objects; bad values answer OAuth errors, never a 500.
func TestOIDCAuthorizeParameters(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		anon := env.NewBrowser(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		for name, c := range map[string]struct {
			q    url.Values
			code string
		}{
			"request object":        {url.Values{"request": {"eyJhbGciOiJub25lIn0.e30."}}, "request_not_supported"},
			"request_uri":           {url.Values{"request_uri": {"https://rp.example/req.jwt"}}, "request_uri_not_supported"},
			"unknown prompt":        {url.Values{"prompt": {"login bogus"}}, "invalid_request"},
			"none with login":       {url.Values{"prompt": {"none login"}}, "invalid_request"},
			"negative max_age":      {url.Values{"max_age": {"-1"}}, "invalid_request"},
			"max_age not a number":  {url.Values{"max_age": {"soon"}}, "invalid_request"},
			"garbage id_token_hint": {url.Values{"id_token_hint": {"not.a.jwt"}}, "invalid_request"},
		} {
			t.Run(name, func(t *testing.T) {
				wantErrorRedirect(t, b.Get(t, authorizeURL(env, clientID, c.q)), env, c.code)
				wantErrorPage(t, anon.Get(t, authorizeURL(env, clientID, c.q)))
			})
		}

		// login_hint prefills the address on the sign-in page.
		p := anon.Get(t, authorizeURL(env, clientID, url.Values{"login_hint": {"hinted@example.com"}}))
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/signin?") {
			t.Fatalf("anonymous authorize: %d %q", p.Status, p.Location())
		}
		if page := anon.Get(t, p.Location()); page.Status != 200 || !strings.Contains(page.Body, `value="hinted@example.com"`) {
			t.Fatalf("sign-in page does not prefill the hint: %d", page.Status)
		}

		// prompt=consent and select_account show the consent page (the
		// workspace picker); max_age within the sign-in's age too.
		for _, q := range []url.Values{{"prompt": {"consent"}}, {"prompt": {"select_account"}}, {"max_age": {"3600"}}, {"max_age": {"9223372036854775807"}}} {
			if p := b.Get(t, authorizeURL(env, clientID, q)); p.Status != 200 || !strings.Contains(p.Body, `name="org_id"`) {
				t.Fatalf("%v: %d %q; want the consent page", q, p.Status, p.Location())
			}
		}

		// prompt=login and max_age=0 ask a signed-in browser to sign in
		// again; back from it, consent, and auth_time is the new sign-in.
		for _, q := range []url.Values{{"prompt": {"login"}}, {"max_age": {"0"}}} {
			env.Clock.Advance(time.Hour)
			p := b.Get(t, authorizeURL(env, clientID, q))
			if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/signin?") || !strings.Contains(p.Location(), "fresh=1") {
				t.Fatalf("%v: %d %q; want a fresh sign-in", q, p.Status, p.Location())
			}
			u, _ := url.Parse(p.Location())
			if page := b.Get(t, p.Location()); page.Status != 200 || !strings.Contains(page.Body, "Sign in again") {
				t.Fatalf("fresh sign-in page: %d", page.Status)
			}
			next := u.Query().Get("next")
			if strings.Contains(next, "prompt") || strings.Contains(next, "max_age") {
				t.Fatalf("next %q asks for the sign-in again", next)
			}
			back := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}})
			if back.Status != http.StatusSeeOther || back.Location() != next {
				t.Fatalf("sign-in: %d to %q; want back to %q", back.Status, back.Location(), next)
			}
			signedInAt := env.Clock.Now()
			got := consentAt(t, b, next, a.OrgID)
			tok := exchangeFor(t, env, clientID, got.Query().Get("code"))
			if at := int64(testenv.Claims(t, tok.Str("id_token"))["auth_time"].(float64)); at != signedInAt.Unix() {
				t.Fatalf("%v: auth_time %d; want the new sign-in %d", q, at, signedInAt.Unix())
			}
		}
	})
}

// pkceVerifier is the verifier of authorizeURL's challenge (RFC 7636
// appendix B).
const pkceVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// exchangeFor exchanges a code of authorizeURL.
func exchangeFor(t *testing.T, env *testenv.Env, clientID, code string) *testenv.Resp {
	t.Helper()
	r := tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"code_verifier": {pkceVerifier}, "redirect_uri": {redirect}})
	if r.Status != 200 || r.Str("id_token") == "" {
		t.Fatalf("exchange: %d %s", r.Status, r.Body)
	}
	return r
}

// TestOIDCIDTokenHint: a hint for the signed-in user goes on to consent;
// another user's asks for a fresh sign-in (login_required with
// prompt=none); a tampered one, or an access token, is refused.
func TestOIDCIDTokenHint(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		hintOf := func(acc *testenv.Account) string {
			b := env.NewBrowser(t)
			signIn(t, b, acc)
			got := consentAt(t, b, authorizeURL(env, clientID, nil), acc.OrgID)
			return exchangeFor(t, env, clientID, got.Query().Get("code")).Str("id_token")
		}
		mine, theirs := hintOf(a), hintOf(other)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		// Expiry is ignored: hints are old ID tokens.
		env.Clock.Advance(3 * time.Hour)
		if p := b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {mine}})); p.Status != 200 {
			t.Fatalf("own hint: %d %q; want consent", p.Status, p.Location())
		}
		p := b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {theirs}}))
		if p.Status != http.StatusSeeOther || !strings.Contains(p.Location(), "fresh=1") {
			t.Fatalf("another user's hint: %d %q; want a fresh sign-in", p.Status, p.Location())
		}
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {theirs}, "prompt": {"none"}})), env, "login_required")
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {mine}, "prompt": {"none"}})), env, "consent_required")

		// Tampered: the other user's subject in my token's payload.
		parts := strings.Split(mine, ".")
		var c map[string]any
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		json.Unmarshal(raw, &c)
		c["sub"] = other.UserID
		raw, _ = json.Marshal(c)
		tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
		// My token's claims signed again by the server's own key under a
		// typ header: "JWT" is an ID token's; a logout token or an ID-JAG
		// (the same key signs them) is no hint.
		mineClaims, _ := base64.RawURLEncoding.DecodeString(parts[1])
		retyped := func(typ string) string {
			jws, err := env.Keys.SignType(context.Background(), "RS256", typ, mineClaims)
			if err != nil {
				t.Fatal(err)
			}
			return jws
		}
		if p := b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {retyped("JWT")}})); p.Status != 200 {
			t.Fatalf("own hint re-signed with typ JWT: %d %q; want consent", p.Status, p.Location())
		}
		// An HS256 access token, and a hint issued to another client.
		otherClient := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		for name, hint := range map[string]string{"tampered": tampered, "access token": a.Access, "truncated": parts[0] + "." + parts[1],
			"typ logout+jwt": retyped("logout+jwt"), "typ oauth-id-jag+jwt": retyped("oauth-id-jag+jwt"), "typ at+jwt": retyped("at+jwt")} {
			t.Run(name, func(t *testing.T) {
				wantErrorRedirect(t, b.Get(t, authorizeURL(env, clientID, url.Values{"id_token_hint": {hint}})), env, "invalid_request")
			})
		}
		wantErrorRedirect(t, b.Get(t, authorizeURL(env, otherClient, url.Values{"id_token_hint": {mine}})), env, "invalid_request")
	})
}

// TestOIDCKeyRotation rotates the RS256 key in the middle of a run across
// three instances on one database: ID tokens signed before the rotation
// keep verifying against every instance's JWK Set, new ones carry the new
// kid, and the old key leaves the set only once everything it signed has
// expired (keys.Keep after the rotation, past IDTokenTTL).
func TestOIDCKeyRotation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		instances := []*testenv.Env{env, env.Another(t), env.Another(t)}
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		// Each exchange at another instance's token endpoint.
		login := func(at *testenv.Env) string {
			got := consentAt(t, b, authorizeURL(env, clientID, nil), a.OrgID)
			return exchangeFor(t, at, clientID, got.Query().Get("code")).Str("id_token")
		}
		ctx := oidc.ClientContext(context.Background(), env.Client)
		verify := func(at *testenv.Env, raw string) error {
			ks := oidc.NewRemoteKeySet(ctx, at.URL+"/.well-known/jwks.json")
			_, err := oidc.NewVerifier(env.URL, ks, &oidc.Config{ClientID: clientID, Now: env.Clock.Now}).Verify(ctx, raw)
			return err
		}
		published := func(at *testenv.Env, kid string) bool {
			r := at.Do(t, "GET", "/.well-known/jwks.json", "", nil).Want(t, 200)
			return strings.Contains(string(r.Body), `"kid":"`+kid+`"`) || strings.Contains(string(r.Body), `"kid": "`+kid+`"`)
		}
		before := login(instances[0])
		oldKid := jwtHeader(t, before)["kid"].(string)

		newKid, err := instances[1].Keys.Rotate(context.Background(), "RS256", keys.Ahead)
		if err != nil {
			t.Fatal(err)
		}
		// Every instance publishes the new key within a reload and goes on
		// signing with the old one: no instance signs with a key another
		// does not publish yet.
		deadline := time.Now().Add(5 * time.Second)
		for i, in := range instances {
			for !published(in, newKid) {
				if time.Now().After(deadline) {
					t.Fatalf("an instance does not publish %s after 5 s", newKid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if kid := jwtHeader(t, login(in))["kid"]; kid != oldKid {
				t.Fatalf("instance %d signs with %v before keys.Ahead; want the old key", i, kid)
			}
		}
		// keys.Ahead after the rotation, every instance signs with the new
		// key at the same instant, and each token verifies against every
		// instance's set.
		env.Clock.Advance(keys.Ahead)
		for i, in := range instances {
			after := login(in)
			if kid := jwtHeader(t, after)["kid"]; kid != newKid {
				t.Fatalf("instance %d signs with %v at keys.Ahead; want the new key", i, kid)
			}
			for j, at := range instances {
				if err := verify(at, after); err != nil {
					t.Fatalf("new ID token from instance %d against instance %d's keys: %v", i, j, err)
				}
			}
		}
		for j, at := range instances {
			if err := verify(at, before); err != nil {
				t.Fatalf("ID token signed before the rotation, against instance %d: %v", j, err)
			}
		}
		// The old token expires after IDTokenTTL; its key stays published
		// until Keep (a day) after the rotation, then leaves every set.
		env.Clock.Advance(23 * time.Hour)
		for j, at := range instances {
			if !published(at, oldKid) {
				t.Fatalf("instance %d dropped the old key before keys.Keep", j)
			}
		}
		if exp := int64(testenv.Claims(t, before)["exp"].(float64)); exp > env.Clock.Now().Unix() {
			t.Fatalf("an ID token outlives 23 hours")
		}
		env.Clock.Advance(time.Hour + time.Second)
		for j, at := range instances {
			if published(at, oldKid) || !published(at, newKid) {
				t.Fatalf("instance %d after keys.Keep: old key published %v, new %v", j, published(at, oldKid), published(at, newKid))
			}
		}
	})
}

// TestOIDCSecondFactorClaims: after a second factor the ID token says so
// (acr aal2, amr with otp), and UserInfo refuses the access token once the
// person disconnects the application.
func TestOIDCSecondFactorClaims(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		secret := withFactor(t, env, a)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		p := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/"}})
		if !strings.HasPrefix(p.Location(), "/signin/mfa?") {
			t.Fatalf("sign-in: %d %q; want the step page", p.Status, p.Location())
		}
		code, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		if p := b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {"/"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("step: %d %s", p.Status, p.Body)
		}
		got := consentAt(t, b, authorizeURL(env, clientID, nil), a.OrgID)
		tok := exchangeFor(t, env, clientID, got.Query().Get("code"))
		c := testenv.Claims(t, tok.Str("id_token"))
		if amr := anyStrings(c["amr"]); c["acr"] != "aal2" || !slices.Contains(amr, "pwd") || !slices.Contains(amr, "otp") {
			t.Fatalf("acr %v amr %v; want aal2 with pwd and otp", c["acr"], c["amr"])
		}
		access := tok.Str("access_token")
		env.Do(t, "GET", "/oauth/userinfo", access, nil).Want(t, 200)
		grants := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200).Get("grants").([]any)
		env.Do(t, "DELETE", "/v1/me/grants/"+grants[0].(map[string]any)["id"].(string), a.Access, nil).Want(t, 200)
		r := env.Do(t, "GET", "/oauth/userinfo", access, nil).Want(t, http.StatusUnauthorized)
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
	})
}
