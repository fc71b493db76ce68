package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// inactive is the one answer for every token a caller may not know about.
const inactive = `{"active":false}`

// introspector is a caller of the introspection endpoint: a bearer token,
// or client credentials in the form.
type introspector struct {
	bearer string
	form   url.Values
}

// introspect posts token (and hint, when set) to env's introspection
// endpoint as c.
func (c introspector) introspect(t testing.TB, env *testenv.Env, token, hint string) *testenv.Resp {
	t.Helper()
	form := url.Values{"token": {token}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	for k, v := range c.form {
		form[k] = v
	}
	req, err := http.NewRequest("POST", env.URL+"/oauth/introspect", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	r, err := env.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantInactive checks that c learns nothing of token, whatever the hint:
// 200 {"active":false}, byte for byte the answer to garbage.
func (c introspector) wantInactive(t testing.TB, env *testenv.Env, token string) {
	t.Helper()
	for _, hint := range []string{"", "access_token", "refresh_token"} {
		r := c.introspect(t, env, token, hint)
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != inactive {
			t.Fatalf("introspection (hint %q) = %d %s; want 200 %s", hint, r.Status, r.Body, inactive)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("Cache-Control = %q; want no-store", r.Header.Get("Cache-Control"))
		}
	}
}

// wantActive checks that c is told token is live, whatever the hint, and
// returns the answer.
func (c introspector) wantActive(t testing.TB, env *testenv.Env, token string, want map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	for _, hint := range []string{"", "access_token", "refresh_token"} {
		r := c.introspect(t, env, token, hint)
		m = r.JSON()
		if r.Status != http.StatusOK || m["active"] != true {
			t.Fatalf("introspection (hint %q) = %d %s; want active", hint, r.Status, r.Body)
		}
		for k, v := range want {
			if m[k] != v {
				t.Fatalf("introspection %s = %v; want %v (answer %s)", k, m[k], v, r.Body)
			}
		}
		for _, k := range []string{"sub", "iss", "org_id", "token_type"} {
			if s, _ := m[k].(string); s == "" {
				t.Fatalf("introspection without %s: %s", k, r.Body)
			}
		}
		exp, _ := m["exp"].(float64)
		iat, _ := m["iat"].(float64)
		if now := float64(env.Clock.Now().Unix()); exp <= now || iat > now || iat <= 0 {
			t.Fatalf("introspection iat %v, exp %v; want iat <= now (%v) < exp", iat, exp, now)
		}
	}
	return m
}

// wantCallerRefused checks a 401 OAuth error with code.
func wantCallerRefused(t testing.TB, r *testenv.Resp, code string) {
	t.Helper()
	wantOAuthError(t, r, http.StatusUnauthorized, code)
	if strings.Contains(string(r.Body), "active") {
		t.Fatalf("a refused caller was told about the token: %s", r.Body)
	}
	if code == "invalid_token" && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer realm="gatehouse", error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate = %q; want a Bearer invalid_token challenge (RFC 6750)", r.Header.Get("WWW-Authenticate"))
	}
}

// keyCaller makes a workspace key (svc_o_) of org as owner and returns
// the caller of its exchanged token and the key's id.
func keyCaller(t testing.TB, env *testenv.Env, ownerToken, org string) (introspector, string) {
	t.Helper()
	k := env.CreateOrgKey(t, ownerToken, org, map[string]any{"name": "resource server", "role": "member"})
	if s := k.Str("api_key.secret"); !strings.HasPrefix(s, "svc_o_") {
		t.Fatalf("org key secret %q; want svc_o_", s)
	}
	tok := env.Exchange(t, k.Str("api_key.secret")).Want(t, 200).Str("access_token")
	return introspector{bearer: tok}, k.Str("api_key.id")
}

// grantIn runs the code flow for client in signed-in browser b, approved
// for org, and returns the access and refresh tokens.
func grantIn(t testing.TB, env *testenv.Env, b *testenv.Browser, clientID, org string) (access, refresh string) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	authURL := oauthConfig(env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	code := consentAt(t, b, authURL, org).Query().Get("code")
	r := tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
	return r.Str("access_token"), r.Str("refresh_token")
}

// appCallers makes env's server take client credentials
// (client_id=<id>, client_secret=<secret>) for the confidential
// application id of workspace apps[id] (a stand-in for the workspace
// applications, which register their own clients and secrets); other
// clients authenticate as public clients do.
func appCallers(env *testenv.Env, secret string, apps map[string]string) {
	oauth.SetClientAuth(env.OAuth, func(r *http.Request, form url.Values) (*oauth.Client, error) {
		id := form.Get("client_id")
		if org, ok := apps[id]; ok && form.Get("client_secret") == secret {
			return &oauth.Client{ID: id, OrgID: org, AuthMethod: "client_secret_post"}, nil
		}
		return oauth.AuthenticateClient(env.OAuth, r, form)
	})
}

// TestIntrospection is the RFC 7662 matrix of issue 25 item 5: each kind
// of token (a password sign-in's access token, an OAuth grant's access and
// refresh tokens, a workspace key's and a personal key's access tokens,
// garbage) × live, revoked, expired, another workspace's, another
// client's, asked by a workspace key's caller and by a workspace
// application.
func TestIntrospection(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, team := env.Team(t)
		u := env.Join(t, owner, team, "member")
		caller, _ := keyCaller(t, env, owner.Token, team)
		owner2, team2 := env.Team(t)
		caller2, _ := keyCaller(t, env, owner2.Token, team2)

		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		otherClient := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, u)
		const secret = "app-secret"
		appCallers(env, secret, map[string]string{clientID: team, otherClient: team2})
		app := introspector{form: url.Values{"client_id": {clientID}, "client_secret": {secret}}}
		app2 := introspector{form: url.Values{"client_id": {otherClient}, "client_secret": {secret}}} // of team2

		t.Run("a password sign-in's access token", func(t *testing.T) {
			access, refresh := env.NewSession(t, u) // scoped to u's default workspace, the team
			if org, _, _ := testenv.TokenOrg(t, access); org != team {
				t.Fatalf("sign-in token org = %s; want the team %s", org, team)
			}
			for _, c := range []introspector{caller, app} {
				m := c.wantActive(t, env, access, map[string]any{"sub": u.UserID, "org_id": team, "token_type": "Bearer", "iss": env.URL})
				if _, ok := m["client_id"]; ok {
					t.Fatalf("a sign-in's token answered with client_id: %v", m)
				}
				if aud := testenv.Strings(m["aud"]); len(aud) != 1 || aud[0] != "gatehouse" {
					t.Fatalf("aud = %v; want [gatehouse]", aud)
				}
			}
			caller2.wantInactive(t, env, access) // another workspace
			app2.wantInactive(t, env, access)
			// A sign-in's refresh token is no OAuth token: nobody's to introspect.
			for _, c := range []introspector{caller, app} {
				c.wantInactive(t, env, refresh)
			}
			env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": refresh}).Want(t, 200)
			caller.wantInactive(t, env, access) // revoked
			app.wantInactive(t, env, access)
		})

		t.Run("an OAuth grant's access and refresh tokens", func(t *testing.T) {
			access, refresh := grantIn(t, env, b, clientID, team)
			want := map[string]any{"sub": u.UserID, "org_id": team, "client_id": clientID, "token_type": "Bearer"}
			caller.wantActive(t, env, access, want)
			app.wantActive(t, env, access, want)
			caller2.wantInactive(t, env, access)
			app2.wantInactive(t, env, access)
			// The refresh token: for the application it was issued to only.
			m := app.wantActive(t, env, refresh, map[string]any{"sub": u.UserID, "org_id": team, "client_id": clientID, "token_type": "refresh_token", "iss": env.URL})
			if _, ok := m["aud"]; ok {
				t.Fatalf("a refresh token answered with aud: %v", m)
			}
			caller.wantInactive(t, env, refresh) // a workspace key is no client
			app2.wantInactive(t, env, refresh)   // another client (of another workspace)
			caller2.wantInactive(t, env, refresh)
			// Rotated: the old refresh token is no longer live, its successor is.
			next := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}}).Want(t, 200)
			app.wantInactive(t, env, refresh)
			app.wantActive(t, env, next.Str("refresh_token"), map[string]any{"token_type": "refresh_token"})
			app.wantActive(t, env, next.Str("access_token"), want)
			// Revoked (RFC 7009): both end.
			wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {next.Str("refresh_token")}, "client_id": {clientID}}))
			for _, tok := range []string{access, next.Str("access_token"), next.Str("refresh_token")} {
				app.wantInactive(t, env, tok)
				caller.wantInactive(t, env, tok)
			}
		})

		t.Run("another client's tokens in the same workspace", func(t *testing.T) {
			third := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
			access, refresh := grantIn(t, env, b, third, team)
			// An access token of the workspace is any resource server's of it...
			app.wantActive(t, env, access, map[string]any{"client_id": third, "org_id": team})
			// ...a refresh token only its own client's.
			app.wantInactive(t, env, refresh)
			// A public client may not introspect at all.
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {third}}}.introspect(t, env, refresh, ""), "invalid_client")
		})

		t.Run("a grant in another workspace", func(t *testing.T) {
			access, refresh := grantIn(t, env, b, clientID, u.OrgID) // u's personal workspace
			app.wantInactive(t, env, access)
			app.wantInactive(t, env, refresh) // its client, but not its workspace
			caller.wantInactive(t, env, access)
		})

		t.Run("workspace and personal key tokens", func(t *testing.T) {
			other, keyID := keyCaller(t, env, owner.Token, team)
			caller.wantActive(t, env, other.bearer, map[string]any{"sub": keyID, "org_id": team, "token_type": "Bearer"})
			app.wantActive(t, env, other.bearer, map[string]any{"sub": keyID})
			caller2.wantInactive(t, env, other.bearer)
			personal := env.CreateUserKey(t, u.Token, map[string]any{"name": "cli", "org_id": team})
			if s := personal.Str("api_key.secret"); !strings.HasPrefix(s, "svc_u_") {
				t.Fatalf("user key secret %q; want svc_u_", s)
			}
			ptok := env.Exchange(t, personal.Str("api_key.secret")).Want(t, 200).Str("access_token")
			caller.wantActive(t, env, ptok, map[string]any{"sub": u.UserID, "org_id": team})
			mine := env.Exchange(t, env.CreateUserKey(t, u.Token, map[string]any{"name": "mine"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
			caller.wantInactive(t, env, mine) // a personal key of u's personal workspace
			// Revoked keys.
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/api-keys/"+keyID, owner.Token, nil).Want(t, 200)
			env.Do(t, "DELETE", "/v1/me/api-keys/"+personal.Str("api_key.id"), u.Token, nil).Want(t, 200)
			caller.wantInactive(t, env, other.bearer)
			caller.wantInactive(t, env, ptok)
			// A revoked key's token is no caller any more.
			wantCallerRefused(t, other.introspect(t, env, ptok, ""), "invalid_token")
		})

		t.Run("a member removed", func(t *testing.T) {
			m := env.Join(t, owner, team, "member")
			caller.wantActive(t, env, m.Token, map[string]any{"sub": m.UserID})
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/members/"+m.UserID, owner.Token, nil).Want(t, 200)
			caller.wantInactive(t, env, m.Token)
		})

		t.Run("garbage", func(t *testing.T) {
			access, refresh := grantIn(t, env, b, clientID, team)
			sid, _, _ := strings.Cut(refresh, ".")
			dot := strings.LastIndex(access, ".")
			for _, tok := range []string{
				"nope", "a.b.c", "\u00e9t\u00e9", strings.Repeat("x", 1500), strings.Repeat("y", 20000),
				sid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // the session's id with a forged secret
				access[:dot+1] + "AAAA" + access[dot+5:],             // a forged signature
				sid,
			} {
				caller.wantInactive(t, env, tok)
				app.wantInactive(t, env, tok)
			}
		})

		t.Run("expired", func(t *testing.T) {
			access, refresh := grantIn(t, env, b, clientID, team)
			signin, _ := env.NewSession(t, u)
			other, _ := keyCaller(t, env, owner.Token, team)
			k := env.CreateOrgKey(t, owner.Token, team, map[string]any{"name": "later", "role": "member"}).Str("api_key.secret")
			env.Clock.Advance(61 * time.Minute) // past every access token's hour
			fresh := introspector{bearer: env.Exchange(t, k).Want(t, 200).Str("access_token")}
			wantCallerRefused(t, caller.introspect(t, env, signin, ""), "invalid_token") // the caller's own token expired too
			for _, tok := range []string{access, signin, other.bearer} {
				fresh.wantInactive(t, env, tok)
				app.wantInactive(t, env, tok)
			}
			app.wantActive(t, env, refresh, map[string]any{"token_type": "refresh_token"})
			env.Clock.Advance(31 * 24 * time.Hour) // past the refresh token's 30 days
			app.wantInactive(t, env, refresh)
		})
	})
}

// TestIntrospectionCallers: who may call the endpoint, and what a caller
// that may not is told (nothing about the token).
func TestIntrospectionCallers(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, team := env.Team(t)
		caller, _ := keyCaller(t, env, owner.Token, team)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		live := owner.Token
		caller.wantActive(t, env, live, nil)

		personal := env.CreateUserKey(t, owner.Token, map[string]any{"name": "cli", "org_id": team}).Str("api_key.secret")
		userKeyToken := env.Exchange(t, personal).Want(t, 200).Str("access_token")
		for name, bearer := range map[string]string{
			"a malformed bearer":                   "garbage",
			"a key-like token no exchange minted":  env.ForgeKeyToken(t, caller.bearer, team, "owner"),
			"a personal key's token (svc_u_)":      userKeyToken,
			"a user's sign-in token":               owner.Token,
			"a raw workspace key instead of a JWT": "svc_o_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		} {
			t.Run(name, func(t *testing.T) {
				wantCallerRefused(t, introspector{bearer: bearer}.introspect(t, env, live, ""), "invalid_token")
			})
		}
		t.Run("an OAuth grant's token", func(t *testing.T) {
			b := env.NewBrowser(t)
			signIn(t, b, owner)
			access, _ := grantIn(t, env, b, clientID, team)
			wantCallerRefused(t, introspector{bearer: access}.introspect(t, env, live, ""), "invalid_token")
		})
		t.Run("no authentication", func(t *testing.T) {
			wantCallerRefused(t, introspector{}.introspect(t, env, live, ""), "invalid_client")
		})
		t.Run("a public client", func(t *testing.T) {
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {clientID}}}.introspect(t, env, live, ""), "invalid_client")
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {clientID}, "client_secret": {"x"}}}.introspect(t, env, live, ""), "invalid_client")
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {"00000000-0000-4000-8000-000000000000"}}}.introspect(t, env, live, ""), "invalid_client")
		})
		t.Run("an application of no workspace", func(t *testing.T) {
			oauth.SetClientAuth(env.OAuth, func(*http.Request, url.Values) (*oauth.Client, error) {
				return &oauth.Client{ID: clientID, AuthMethod: "client_secret_basic"}, nil
			})
			defer oauth.SetClientAuth(env.OAuth, nil)
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {clientID}}}.introspect(t, env, live, ""), "invalid_client")
		})
		t.Run("bad requests", func(t *testing.T) {
			post := func(form url.Values, bearer string) *testenv.Resp {
				req, _ := http.NewRequest("POST", env.URL+"/oauth/introspect", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if bearer != "" {
					req.Header.Set("Authorization", "Bearer "+bearer)
				}
				r, err := env.Send(req)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			wantOAuthError(t, post(url.Values{}, caller.bearer), 400, "invalid_request")
			wantOAuthError(t, post(url.Values{"token": {live, live}}, caller.bearer), 400, "invalid_request")
			wantOAuthError(t, post(url.Values{"token": {live}, "client_id": {clientID}}, caller.bearer), 400, "invalid_request")
			wantOAuthError(t, post(url.Values{"token": {"\x00"}}, caller.bearer), 400, "invalid_request")
			big := url.Values{"token": {strings.Repeat("x", 2<<20)}}
			wantOAuthError(t, post(big, caller.bearer), http.StatusRequestEntityTooLarge, "invalid_request")
			// No CORS: server to server only.
			r := post(url.Values{"token": {live}}, caller.bearer)
			if r.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("Access-Control-Allow-Origin = %q; want none", r.Header.Get("Access-Control-Allow-Origin"))
			}
		})
		t.Run("a kept caller's token past its expiry", func(t *testing.T) {
			k := env.CreateOrgKey(t, owner.Token, team, map[string]any{"name": "rs", "role": "member"}).Str("api_key.secret")
			rs := introspector{bearer: env.Exchange(t, k).Want(t, 200).Str("access_token")}
			env.Clock.Advance(15*time.Minute - time.Second) // a key's token lives 15 minutes
			rs.wantActive(t, env, live, nil)
			env.Clock.Advance(time.Second)
			wantCallerRefused(t, rs.introspect(t, env, live, ""), "invalid_token")
		})
	})
}

// TestIntrospectionKeyExpiry: a workspace key that expires while its
// exchanged token is still unexpired ends both, as the tool APIs judge
// it: the token introspects inactive and can no longer call.
func TestIntrospectionKeyExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, team := env.Team(t)
		one := 1
		secret := env.CreateOrgKey(t, owner.Token, team, map[string]any{"name": "short", "role": "member", "expires_in_days": one}).Str("api_key.secret")
		long := env.CreateOrgKey(t, owner.Token, team, map[string]any{"name": "long", "role": "member"}).Str("api_key.secret")
		env.Clock.Advance(24*time.Hour - 5*time.Minute)
		short := introspector{bearer: env.Exchange(t, secret).Want(t, 200).Str("access_token")}
		caller := introspector{bearer: env.Exchange(t, long).Want(t, 200).Str("access_token")}
		caller.wantActive(t, env, short.bearer, nil)
		short.wantActive(t, env, caller.bearer, nil)
		env.Clock.Advance(10 * time.Minute) // the key expired; its token has 5 minutes left
		if env.Do(t, "GET", "/tasks/v1/issues", short.bearer, nil).Status != http.StatusUnauthorized {
			t.Fatalf("the tool API serves the token of an expired key")
		}
		caller.wantInactive(t, env, short.bearer)
		wantCallerRefused(t, short.introspect(t, env, caller.bearer, ""), "invalid_token")
	})
}

// TestIntrospectionScanLimited: a caller without credentials learns
// nothing and is soon answered 429 (so scanning tokens through the
// endpoint goes nowhere), while an authenticated resource server on the
// same address is never limited.
func TestIntrospectionScanLimited(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		owner, team := env.Team(t)
		caller, _ := keyCaller(t, env, owner.Token, team)
		scanner := env.From(t, "127.0.0.7")
		limited := false
		for i := range 40 {
			r := introspector{bearer: "guess-" + testenv.RandomHex(4)}.introspect(t, scanner, owner.Token, "")
			if strings.Contains(string(r.Body), "active") {
				t.Fatalf("scan %d told about the token: %s", i, r.Body)
			}
			if r.Status == http.StatusTooManyRequests {
				if r.Header.Get("Retry-After") == "" {
					t.Fatalf("429 without Retry-After")
				}
				limited = true
				break
			}
			wantCallerRefused(t, r, "invalid_token")
		}
		if !limited {
			t.Fatalf("40 failed authentications from one address were never limited")
		}
		for range 50 {
			caller.wantActive(t, scanner, owner.Token, nil)
		}
	})
}

// TestIntrospectionAcrossInstances: a token revoked through one instance
// is active false on every instance of one PostgreSQL within 2 s, as the
// revocation list refuses it on every route.
func TestIntrospectionAcrossInstances(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		instances := []*testenv.Env{env, env.Another(t), env.Another(t)}
		owner, team := env.Team(t)
		caller, _ := keyCaller(t, env, owner.Token, team)
		u := env.Join(t, owner, team, "member")
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, u)
		t.Run("a caller's workspace key revoked", func(t *testing.T) {
			rs, keyID := keyCaller(t, env, owner.Token, team)
			for _, in := range instances {
				for range 3 { // kept by every instance
					rs.wantActive(t, in, u.Token, nil)
				}
			}
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/api-keys/"+keyID, owner.Token, nil).Want(t, 200)
			deadline := time.Now().Add(2 * time.Second)
			for i, in := range instances {
				for {
					r := rs.introspect(t, in, u.Token, "")
					if r.Status == http.StatusUnauthorized {
						wantCallerRefused(t, r, "invalid_token")
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("instance %d: introspection by a revoked key's token = %d %s; want 401 within 2 s", i, r.Status, r.Body)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
		for name, revoke := range map[string]func(access, refresh string){
			"an access token revoked at the revocation endpoint": func(access, _ string) {
				wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {access}, "client_id": {clientID}}))
			},
			"the grant deleted by its user": func(access, _ string) {
				grants := env.Do(t, "GET", "/v1/me/grants", u.Token, nil).Want(t, 200).List(t, "grants")
				for _, g := range grants {
					env.Do(t, "DELETE", "/v1/me/grants/"+g["id"].(string), u.Token, nil).Want(t, 200)
				}
			},
		} {
			t.Run(name, func(t *testing.T) {
				access, refresh := grantIn(t, env, b, clientID, team)
				for _, in := range instances {
					caller.wantActive(t, in, access, map[string]any{"client_id": clientID})
				}
				revoke(access, refresh)
				deadline := time.Now().Add(2 * time.Second)
				for i, in := range instances {
					for {
						r := caller.introspect(t, in, access, "")
						if r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == inactive {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("instance %d: introspection after the revocation = %d %s; want %s within 2 s", i, r.Status, r.Body, inactive)
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
			})
		}
	})
}
