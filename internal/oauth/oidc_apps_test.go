package oauth_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestOIDCRelyingPartyConfidential is TestOIDCRelyingParty for a
// confidential workspace application, once per client authentication
// method: discovery, code + PKCE + nonce, the ID token verified by go-oidc
// against the JWK Set with the application's client_id as audience (and
// its registered id_token_signed_response_alg), UserInfo, refresh, an
// unregistered post_logout_redirect_uri refused, RP-initiated logout from
// the end_session_endpoint of discovery back to a registered URI with the
// state, and a back-channel logout token at the application's registered
// backchannel_logout_uri for that sign-out and for a sign-out on
// Gatehouse's own pages. x/oauth2 authenticates by client_secret_basic
// and client_secret_post; it has no private_key_jwt, so that token
// request is made by hand with a signed assertion, and go-oidc verifies
// what it returns.
func TestOIDCRelyingPartyConfidential(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{AllowPrivate: true, RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		w := newAppWorld(t, env)
		methods := []struct {
			method, alg string
			style       oauth2.AuthStyle
		}{
			{"client_secret_basic", "RS256", oauth2.AuthStyleInHeader},
			{"client_secret_post", "RS256", oauth2.AuthStyleInParams},
			{"private_key_jwt", "ES256", 0},
		}
		apps := map[string]*app{} // registered while the owner's sign-in is fresh
		for _, c := range methods {
			apps[c.method] = registerApp(t, env, w.owner.Access, w.org, c.method, map[string]any{"client_name": "Acme Portal",
				"post_logout_redirect_uris": []string{postLogout}, "backchannel_logout_uri": rc.URL + "/" + c.method,
				"id_token_signed_response_alg": c.alg})
		}
		for _, c := range methods {
			t.Run(c.method, func(t *testing.T) {
				a := apps[c.method]
				rp := newRelyingParty(t, env, a.clientID, oidc.ScopeOpenID, "profile", "email")
				rp.cfg.ClientSecret, rp.cfg.Endpoint.AuthStyle = a.secret, c.style
				var disco struct {
					Methods    []string `json:"token_endpoint_auth_methods_supported"`
					EndSession string   `json:"end_session_endpoint"`
				}
				if err := rp.provider.Claims(&disco); err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(disco.Methods, c.method) || disco.EndSession != env.URL+"/oauth/logout" {
					t.Fatalf("discovery: auth methods %v, end_session_endpoint %q", disco.Methods, disco.EndSession)
				}
				// The token endpoint, as the relying party authenticates to it.
				token := func(t *testing.T, form url.Values) *oauth2.Token {
					t.Helper()
					if c.method != "private_key_jwt" {
						var tok *oauth2.Token
						var err error
						if form.Get("grant_type") == "refresh_token" {
							tok, err = rp.cfg.TokenSource(rp.ctx, &oauth2.Token{RefreshToken: form.Get("refresh_token")}).Token()
						} else {
							tok, err = rp.cfg.Exchange(rp.ctx, form.Get("code"), oauth2.VerifierOption(form.Get("code_verifier")))
						}
						if err != nil {
							t.Fatal(err)
						}
						return tok
					}
					if rp.provider.Endpoint().TokenURL != env.URL+"/oauth/token" {
						t.Fatalf("token_endpoint %q", rp.provider.Endpoint().TokenURL) // the assertion's aud below
					}
					r := a.post(t, env, "/oauth/token", form).Want(t, 200)
					tok := &oauth2.Token{AccessToken: r.Str("access_token"), RefreshToken: r.Str("refresh_token"), TokenType: r.Str("token_type"),
						Expiry: time.Now().Add(time.Duration(r.JSON()["expires_in"].(float64)) * time.Second)}
					return tok.WithExtra(map[string]any{"id_token": r.Str("id_token")})
				}
				verify := func(t *testing.T, tok *oauth2.Token, nonce string) (*oidc.IDToken, map[string]any) {
					t.Helper()
					raw := rawIDToken(t, tok)
					idt, err := rp.verifier(a.clientID, c.alg).Verify(rp.ctx, raw)
					if err != nil {
						t.Fatalf("verify ID token: %v", err)
					}
					if idt.Subject != w.member.UserID || idt.Issuer != env.URL || !slices.Equal(idt.Audience, []string{a.clientID}) || idt.Nonce != nonce {
						t.Fatalf("ID token = %+v", idt)
					}
					if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
						t.Fatalf("at_hash: %v", err)
					}
					if h := jwtHeader(t, raw); h["alg"] != c.alg {
						t.Fatalf("ID token alg %v; want the registered %s", h["alg"], c.alg)
					}
					if org, _, _ := testenv.TokenOrg(t, tok.AccessToken); org != w.org {
						t.Fatalf("access token org = %s; want the application's %s", org, w.org)
					}
					return idt, testenv.Claims(t, raw)
				}
				login := func(t *testing.T, b *testenv.Browser, nonce string) *oauth2.Token {
					t.Helper()
					verifier := oauth2.GenerateVerifier()
					back := consentAt(t, b, rp.cfg.AuthCodeURL("st-"+c.method, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), w.org)
					if q := back.Query(); q.Get("state") != "st-"+c.method || q.Get("iss") != env.URL {
						t.Fatalf("redirect %s; want the state and iss", back)
					}
					return token(t, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
						"code_verifier": {verifier}, "redirect_uri": {redirect}})
				}

				b := env.NewBrowser(t)
				signIn(t, b, w.member)
				nonce := "n-" + testenv.RandomHex(6)
				tok := login(t, b, nonce)
				_, claims := verify(t, tok, nonce)
				sid, _ := claims["sid"].(string)
				if sid == "" || claims["azp"] != a.clientID {
					t.Fatalf("ID token claims %v; want sid and azp", claims)
				}

				info, err := rp.provider.UserInfo(rp.ctx, oauth2.StaticTokenSource(tok))
				if err != nil {
					t.Fatal(err)
				}
				if info.Subject != w.member.UserID || !strings.EqualFold(info.Email, w.member.Email) {
					t.Fatalf("userinfo = %+v", info)
				}

				env.Clock.Advance(2 * time.Hour)
				fresh := token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
				_, c2 := verify(t, fresh, "")
				if c2["sid"] != sid || c2["auth_time"] != claims["auth_time"] || fresh.RefreshToken == tok.RefreshToken {
					t.Fatalf("refreshed ID token %v; first %v", c2, claims)
				}
				hint := rawIDToken(t, fresh)

				// RP-initiated logout: an unregistered URI is refused and the
				// person stays signed in; the registered one gets the state.
				end := func(uri, state string) *testenv.Page {
					return b.Get(t, disco.EndSession+"?"+url.Values{"id_token_hint": {hint}, "post_logout_redirect_uri": {uri}, "state": {state}}.Encode())
				}
				wantLogoutRefused(t, end(otherPostLogout, "x"), "did not register")
				wantLogoutRefused(t, end(postLogout+"/", "x"), "did not register")
				wantSignedIn(t, b, true)
				rc.Reset()
				if p := end(postLogout, "bye-"+c.method); p.Status != http.StatusSeeOther || p.Location() != postLogout+"?state=bye-"+c.method {
					t.Fatalf("logout = %d to %q, body %.300s; want 303 to %s with the state", p.Status, p.Location(), p.Body, postLogout)
				}
				wantSignedIn(t, b, false)
				waitLogout(t, env, rc, a.clientID, w.member.UserID, sid, 1)

				// A sign-out on Gatehouse's own pages tells the application too.
				b = env.NewBrowser(t)
				signIn(t, b, w.member)
				nonce = "n-" + testenv.RandomHex(6)
				_, claims = verify(t, login(t, b, nonce), nonce)
				if p := b.Post(t, "/signout", url.Values{}); p.Status != http.StatusSeeOther {
					t.Fatalf("sign-out = %d", p.Status)
				}
				waitLogout(t, env, rc, a.clientID, w.member.UserID, claims["sid"].(string), 1)
			})
		}
	})
}
