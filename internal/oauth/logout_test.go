package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The ID tokens of these tests are signed here with the ring (the ID token
// endpoint is another part of issue 25): the claims an RP-initiated logout
// reads.

const (
	postLogout      = "https://rp.example/signed-out"
	otherPostLogout = "https://other-rp.example/signed-out"
)

// idToken signs claims with the env's RS256 key.
func idToken(t testing.TB, env *testenv.Env, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := env.Keys.Sign(context.Background(), "RS256", payload)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// hintFor is an ID token of a's for clientID, long expired (a logout hint's
// expiry is not checked).
func hintFor(t testing.TB, env *testenv.Env, a *testenv.Account, clientID, sid string) string {
	t.Helper()
	iat := env.Clock.Now().Add(-3 * 60 * 60 * 1e9).Unix()
	return idToken(t, env, map[string]any{"iss": env.URL, "sub": a.UserID, "aud": clientID, "iat": iat, "exp": iat + 300, "sid": sid})
}

// logoutURL is the end_session_endpoint with q.
func logoutURL(q url.Values) string { return "/oauth/logout?" + q.Encode() }

// wantSignedIn checks whether browser b still has its Gatehouse session.
func wantSignedIn(t *testing.T, b *testenv.Browser, want bool) {
	t.Helper()
	p := b.Get(t, "/account")
	signedIn := p.Status == http.StatusOK
	if signedIn != want {
		t.Fatalf("GET /account = %d (Location %q); signed in %v, want %v", p.Status, p.Location(), signedIn, want)
	}
}

// wantLogoutRefused checks the error page of a refused logout: 400, no
// redirect anywhere.
func wantLogoutRefused(t *testing.T, p *testenv.Page, says string) {
	t.Helper()
	if p.Status != http.StatusBadRequest || p.Location() != "" || !strings.Contains(p.Body, says) {
		t.Fatalf("logout = %d Location %q, body %s; want 400 saying %q and no redirect", p.Status, p.Location(), p.Body, says)
	}
}

// TestRPInitiatedLogout: OpenID Connect RP-Initiated Logout 1.0 at
// /oauth/logout (issue 25 item 2).
func TestRPInitiatedLogout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "post_logout_redirect_uris": []string{postLogout}})
		otherID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "post_logout_redirect_uris": []string{otherPostLogout}})
		signedIn := func(t *testing.T) *testenv.Browser {
			b := env.NewBrowser(t)
			signIn(t, b, a)
			return b
		}

		t.Run("a valid hint naming the signed-in person signs out and returns with the state", func(t *testing.T) {
			b := signedIn(t)
			verifier := oauth2.GenerateVerifier()
			r := tokenPost(t, env, exchangeForm(clientID, approvedCode(t, env, b, a, clientID, verifier), verifier)).Want(t, 200)
			sid, _, _ := strings.Cut(r.Str("refresh_token"), ".")
			for _, method := range []string{"GET", "POST"} {
				q := url.Values{"id_token_hint": {hintFor(t, env, a, clientID, sid)}, "post_logout_redirect_uri": {postLogout},
					"state": {"st-" + method}, "ui_locales": {"fr"}}
				var p *testenv.Page
				if method == "GET" {
					p = b.Get(t, logoutURL(q))
				} else {
					// A relying party's form POST comes from its own site.
					p = b.PostCrossSite(t, "/oauth/logout", q)
				}
				if p.Status != http.StatusSeeOther || p.Location() != postLogout+"?state=st-"+method {
					t.Fatalf("%s logout = %d Location %q, body %s; want 303 to %s?state=st-%s", method, p.Status, p.Location(), p.Body, postLogout, method)
				}
				wantSignedIn(t, b, false)
				b = signedIn(t)
			}
			// client_id agreeing with the hint is fine; without a state
			// the URI comes back as registered.
			p := b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, a, clientID, sid)}, "client_id": {clientID},
				"post_logout_redirect_uri": {postLogout}}))
			if p.Status != http.StatusSeeOther || p.Location() != postLogout {
				t.Fatalf("logout = %d Location %q; want 303 to %s", p.Status, p.Location(), postLogout)
			}
			wantSignedIn(t, b, false)
		})

		t.Run("without a redirect URI the signed-out page is shown", func(t *testing.T) {
			b := signedIn(t)
			p := b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, a, clientID, "")}}))
			if p.Status != http.StatusOK || !strings.Contains(p.Body, "Signed out") {
				t.Fatalf("logout = %d, body %s; want the signed-out page", p.Status, p.Body)
			}
			wantSignedIn(t, b, false)
			// Nobody signed in: the page again, and nothing to confirm.
			p = b.Get(t, "/oauth/logout")
			if p.Status != http.StatusOK || !strings.Contains(p.Body, "Signed out") {
				t.Fatalf("logout while signed out = %d, body %s; want the signed-out page", p.Status, p.Body)
			}
		})

		t.Run("an unregistered post_logout_redirect_uri is refused, never redirected", func(t *testing.T) {
			b := signedIn(t)
			for name, uri := range map[string]string{
				"unregistered":        "https://evil.example/phish",
				"another client's":    otherPostLogout,
				"a prefix":            postLogout + "/more",
				"another query":       postLogout + "?x=1",
				"the redirect_uri":    redirect,
				"scheme-relative":     "//evil.example",
				"different case host": "https://RP.example/signed-out",
			} {
				p := b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, a, clientID, "")}, "post_logout_redirect_uri": {uri}, "state": {"s"}}))
				if p.Location() != "" {
					t.Fatalf("%s URI %s: redirected to %s", name, uri, p.Location())
				}
				wantLogoutRefused(t, p, "did not register")
				p = b.Get(t, logoutURL(url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {uri}}))
				wantLogoutRefused(t, p, "did not register")
			}
			// Another client's URI with that client named is its own: fine
			// after confirmation; named with this client's hint, refused.
			wantLogoutRefused(t, b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, a, clientID, "")}, "client_id": {otherID},
				"post_logout_redirect_uri": {otherPostLogout}})), "two different applications")
			// A URI without any client named: refused.
			wantLogoutRefused(t, b.Get(t, logoutURL(url.Values{"post_logout_redirect_uri": {postLogout}})), "without saying which application")
			wantLogoutRefused(t, b.Get(t, logoutURL(url.Values{"client_id": {"no-such-client"}, "post_logout_redirect_uri": {postLogout}})), "not registered")
			wantSignedIn(t, b, true)
		})

		t.Run("a tampered, foreign or forged id_token_hint is refused", func(t *testing.T) {
			b := signedIn(t)
			good := hintFor(t, env, a, clientID, "")
			parts := strings.Split(good, ".")
			claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
			other := env.Register(t)
			tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(claims), a.UserID, other.UserID, 1))) + "." + parts[2]
			iat := env.Clock.Now().Unix()
			foreignIss := idToken(t, env, map[string]any{"iss": "https://other-issuer.example", "sub": a.UserID, "aud": clientID, "iat": iat, "exp": iat + 300})
			noSub := idToken(t, env, map[string]any{"iss": env.URL, "aud": clientID, "iat": iat, "exp": iat + 300})
			twoAud := idToken(t, env, map[string]any{"iss": env.URL, "sub": a.UserID, "aud": []string{clientID, otherID}, "iat": iat, "exp": iat + 300})
			forged := forgedToken(t, env, map[string]any{"iss": env.URL, "sub": a.UserID, "aud": clientID, "iat": iat, "exp": iat + 300})
			for name, h := range map[string]string{"tampered": tampered, "foreign issuer": foreignIss, "no subject": noSub,
				"two audiences": twoAud, "forged with the ring's kid": forged, "not a JWT": "abc.def", "unsigned": parts[0] + "." + parts[1] + "."} {
				p := b.Get(t, logoutURL(url.Values{"id_token_hint": {h}, "post_logout_redirect_uri": {postLogout}, "state": {"s"}}))
				if p.Location() != "" {
					t.Fatalf("%s hint: redirected to %s", name, p.Location())
				}
				wantLogoutRefused(t, p, "did not issue")
			}
			wantSignedIn(t, b, true)
		})

		t.Run("without a hint the person confirms; the form refuses other sites", func(t *testing.T) {
			b := signedIn(t)
			p := b.Get(t, logoutURL(url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {postLogout}, "state": {"st-9"}}))
			if p.Status != http.StatusOK || !strings.Contains(p.Body, `action="/oauth/logout/confirm"`) || !strings.Contains(p.Body, "rp.example") {
				t.Fatalf("logout without hint = %d, body %s; want the confirmation page", p.Status, p.Body)
			}
			// The form action includes the return origin (CSP form-action
			// applies to the redirect after the form).
			if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://rp.example") {
				t.Fatalf("CSP %q; want form-action with https://rp.example", csp)
			}
			wantSignedIn(t, b, true)
			form := hiddenFields(p.Body)
			// Logout CSRF: a page of another site posting the form.
			if p := b.PostCrossSite(t, "/oauth/logout/confirm", form); p.Status != http.StatusForbidden {
				t.Fatalf("cross-site confirmation = %d; want 403", p.Status)
			}
			// A cross-site POST to the endpoint itself only asks again.
			if p := b.PostCrossSite(t, "/oauth/logout", form); p.Status != http.StatusOK || !strings.Contains(p.Body, "/oauth/logout/confirm") {
				t.Fatalf("cross-site logout request = %d; want the confirmation page", p.Status)
			}
			wantSignedIn(t, b, true)
			// A forged confirmation with an unregistered URI: refused.
			bad := url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {"https://evil.example/"}}
			wantLogoutRefused(t, b.Post(t, "/oauth/logout/confirm", bad), "did not register")
			wantSignedIn(t, b, true)
			p = b.Post(t, "/oauth/logout/confirm", form)
			if p.Status != http.StatusSeeOther || p.Location() != postLogout+"?state=st-9" {
				t.Fatalf("confirmed logout = %d Location %q; want 303 to %s?state=st-9", p.Status, p.Location(), postLogout)
			}
			wantSignedIn(t, b, false)
		})

		t.Run("nobody signed in: a link back, not a redirect, for a client anyone could register", func(t *testing.T) {
			b := env.NewBrowser(t)
			for _, q := range []url.Values{
				{"client_id": {clientID}, "post_logout_redirect_uri": {postLogout}, "state": {"st-7"}},
				{"id_token_hint": {hintFor(t, env, a, clientID, "")}, "post_logout_redirect_uri": {postLogout}, "state": {"st-7"}},
			} {
				p := b.Get(t, logoutURL(q))
				if p.Status != http.StatusOK || p.Location() != "" || !strings.Contains(p.Body, `href="`+postLogout+`?state=st-7"`) ||
					!strings.Contains(p.Body, "Return to rp.example") {
					t.Fatalf("logout while signed out = %d Location %q, body %s; want the signed-out page linking back", p.Status, p.Location(), p.Body)
				}
			}
		})

		t.Run("a hint naming another person asks first", func(t *testing.T) {
			b := signedIn(t)
			other := env.Register(t)
			p := b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, other, clientID, "")}, "post_logout_redirect_uri": {postLogout}}))
			if p.Status != http.StatusOK || !strings.Contains(p.Body, `action="/oauth/logout/confirm"`) {
				t.Fatalf("logout with another person's hint = %d, body %s; want the confirmation page", p.Status, p.Body)
			}
			wantSignedIn(t, b, true)
		})
	})
}

// forgedToken signs claims with a key that is not the ring's, under the
// ring's RS256 kid.
func forgedToken(t testing.TB, env *testenv.Env, claims map[string]any) string {
	t.Helper()
	set, err := env.Keys.PublicKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kid := ""
	for _, k := range set.Keys {
		if k.Algorithm == "RS256" {
			kid = k.KeyID
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := jws.CompactSerialize()
	return raw
}
