package binary

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// walkOIDC is a team's product signing its members in with Gatehouse, on
// the binary as shipped (issue 25): discovery and the JWK Set, a
// confidential workspace application registered over the API, the
// person's browser signing in on the hosted page and coming back with a
// code (first party: no consent page), the code exchanged with the
// application's secret for an ID token that go-oidc verifies against the
// binary's keys, UserInfo, introspection by the application, and a
// revocation that introspection then reports.
func walkOIDC(t *testing.T, s *server, orgToken, orgID, email, password string) {
	ctx := context.Background()
	disc := s.do(t, "GET", "/.well-known/openid-configuration", "", nil, 200)
	if disc.Str("issuer") != s.base {
		t.Fatalf("issuer = %q; want the base URL %q", disc.Str("issuer"), s.base)
	}
	for _, f := range []string{"jwks_uri", "userinfo_endpoint", "introspection_endpoint", "revocation_endpoint", "end_session_endpoint"} {
		if !strings.HasPrefix(disc.Str(f), s.base+"/") {
			t.Errorf("discovery %s = %q; want an endpoint of %s", f, disc.Str(f), s.base)
		}
	}
	var algs []string
	for _, k := range s.do(t, "GET", "/.well-known/jwks.json", "", nil, 200).Get("keys").([]any) {
		algs = append(algs, k.(map[string]any)["alg"].(string))
	}
	if !slices.Contains(algs, "RS256") || !slices.Contains(algs, "ES256") {
		t.Fatalf("JWK Set algorithms = %v; want RS256 and ES256", algs)
	}

	const redirect = "https://app.example/callback"
	app := s.do(t, "POST", "/v1/orgs/"+orgID+"/applications", orgToken, map[string]any{"client_name": "Binary app",
		"redirect_uris": []string{redirect}, "token_endpoint_auth_method": "client_secret_basic", "first_party": true}, 200)
	clientID, secret := app.Str("application.client_id"), app.Str("client_secret")
	if clientID == "" || secret == "" {
		t.Fatalf("application = %s; want a client_id and a secret", app.Body)
	}

	// The browser: the sign-in page's form, then the authorization request.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signin, _ := http.NewRequest("POST", s.base+"/signin", strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	signin.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	signin.Header.Set("Sec-Fetch-Site", "same-origin")
	if res, err := browser.Do(signin); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in page post: %v %v; want 303\n%s", res, err, s.tail())
	} else {
		res.Body.Close()
	}
	conf := oauth2.Config{ClientID: clientID, ClientSecret: secret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: disc.Str("authorization_endpoint"), TokenURL: disc.Str("token_endpoint"), AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:   []string{oidc.ScopeOpenID, "email", "profile"}}
	verifier, nonce := oauth2.GenerateVerifier(), "n-"+testenv.RandomHex(8)
	res, err := browser.Get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound || back == nil || !strings.HasPrefix(back.String(), redirect+"?") {
		t.Fatalf("authorize answered %d to %q; want a redirect to %s with a code (first party)\n%s", res.StatusCode, res.Header.Get("Location"), redirect, s.tail())
	}
	if back.Query().Get("state") != "st" || back.Query().Get("iss") != s.base {
		t.Errorf("authorization response %s; want state st and iss %s", back, s.base)
	}

	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("code exchange: %v\n%s", err, s.tail())
	}
	provider, err := oidc.NewProvider(ctx, s.base)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, raw)
	if err != nil {
		t.Fatalf("ID token: %v", err)
	}
	if idt.Nonce != nonce || idt.VerifyAccessToken(tok.AccessToken) != nil {
		t.Errorf("ID token nonce %q, at_hash check %v; want %q and a match", idt.Nonce, idt.VerifyAccessToken(tok.AccessToken), nonce)
	}
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || info.Email != email || info.Subject != idt.Subject {
		t.Fatalf("UserInfo = %+v, %v; want %s of subject %s", info, err, email, idt.Subject)
	}

	// The application asks about its tokens, and revokes the session.
	introspect := func(token string) *testenv.Resp {
		req, _ := http.NewRequest("POST", disc.Str("introspection_endpoint"), strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
		return s.send(t, req, 200)
	}
	if r := introspect(tok.AccessToken); r.Get("active") != true || r.Str("sub") != idt.Subject || r.Str("org_id") != orgID {
		t.Fatalf("introspection of the live token = %s; want active, sub %s, org_id %s", r.Body, idt.Subject, orgID)
	}
	revoke, _ := http.NewRequest("POST", disc.Str("revocation_endpoint"), strings.NewReader(url.Values{"token": {tok.RefreshToken}}.Encode()))
	revoke.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	revoke.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	s.send(t, revoke, 200)
	for end := time.Now().Add(5 * time.Second); introspect(tok.AccessToken).Get("active") != false; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the access token of a revoked session is still active 5 s later")
		}
	}
}
