package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// inactive is the one answer for every token a caller may not know about.
const inactive = `{"active":false}`

// introspector is a caller of the introspection endpoint: a bearer token,
// a workspace application (credentials added fresh on every call), or
// raw client fields in the form.
type introspector struct {
	bearer string
	app    *app
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
	if c.app != nil {
		return c.app.post(t, env, "/oauth/introspect", form)
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

// app is a workspace application of a test, registered through the API:
// its client_id and how it authenticates (client_secret_basic,
// client_secret_post, private_key_jwt with keys, or none).
type app struct {
	id, clientID, secret, method, org string
	keys                              *assertionKeys
}

// registerApp registers an application of org as ownerToken (an owner or
// admin of org) authenticating by method.
func registerApp(t testing.TB, env *testenv.Env, ownerToken, org, method string, extra map[string]any) *app {
	t.Helper()
	a := &app{method: method, org: org}
	body := map[string]any{"client_name": "Resource " + testenv.RandomHex(3), "redirect_uris": []string{redirect}, "token_endpoint_auth_method": method}
	if method == "private_key_jwt" {
		a.keys = newAssertionKeys(t)
		body["jwks"] = a.keys.jwks()
	}
	for k, v := range extra {
		body[k] = v
	}
	r := env.Do(t, "POST", "/v1/orgs/"+org+"/applications", ownerToken, body).Want(t, 200)
	a.id, a.clientID, a.secret = r.Str("application.id"), r.Str("application.client_id"), r.Str("client_secret")
	if (a.secret != "") != (method == "client_secret_basic" || method == "client_secret_post") {
		t.Fatalf("%s application: secret %q", method, a.secret)
	}
	return a
}

// post posts form to path of env authenticated as a, by its method: an
// assertion is signed afresh (a new jti) for every request, with the
// endpoint's URL as its audience.
func (a *app) post(t testing.TB, env *testenv.Env, path string, form url.Values) *testenv.Resp {
	t.Helper()
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	basic := false
	switch a.method {
	case "client_secret_basic":
		basic = true
	case "client_secret_post":
		f.Set("client_id", a.clientID)
		f.Set("client_secret", a.secret)
	case "private_key_jwt":
		now := env.Clock.Now()
		f = assertionForm(f, a.keys.sign(t, jose.ES256, map[string]any{"iss": a.clientID, "sub": a.clientID, "aud": env.URL + path,
			"exp": now.Add(time.Minute).Unix(), "iat": now.Unix(), "jti": testenv.RandomHex(8)}))
	default:
		f.Set("client_id", a.clientID)
	}
	req, err := http.NewRequest("POST", env.URL+path, strings.NewReader(f.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(a.clientID), url.QueryEscape(a.secret))
	}
	r, err := env.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// grant runs the code flow for a in signed-in browser b (a member of a's
// workspace: the consent page offers that workspace only) and returns
// the access and refresh tokens.
func (a *app) grant(t testing.TB, env *testenv.Env, b *testenv.Browser) (access, refresh string) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	code := consentAt(t, b, oauthConfig(env, a.clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), a.org).Query().Get("code")
	form := exchangeForm(a.clientID, code, verifier)
	form.Del("client_id")
	r := a.post(t, env, "/oauth/token", form).Want(t, 200)
	return r.Str("access_token"), r.Str("refresh_token")
}

// caller is a as a caller of the introspection endpoint.
func (a *app) caller() introspector { return introspector{app: a} }

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

// TestIntrospection is the RFC 7662 matrix of issue 25 item 5: each kind
// of token (a password sign-in's access token, an OAuth grant's access and
// refresh tokens, a workspace key's and a personal key's access tokens,
// garbage) × live, revoked, expired, another workspace's, another
// client's, asked by a workspace key's caller and by confidential
// workspace applications of each method (client_secret_basic,
// client_secret_post, private_key_jwt).
func TestIntrospection(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, team := env.Team(t)
		u := env.Join(t, owner, team, "member")
		caller, _ := keyCaller(t, env, owner.Token, team)
		owner2, team2 := env.Team(t)
		caller2, _ := keyCaller(t, env, owner2.Token, team2)

		basic := registerApp(t, env, owner.Token, team, "client_secret_basic", nil)
		post := registerApp(t, env, owner.Token, team, "client_secret_post", nil)
		jwt := registerApp(t, env, owner.Token, team, "private_key_jwt", nil)
		other := registerApp(t, env, owner2.Token, team2, "client_secret_post", nil)
		apps := []introspector{basic.caller(), post.caller(), jwt.caller()}
		app2 := other.caller() // of team2
		b := env.NewBrowser(t)
		signIn(t, b, u)

		t.Run("a password sign-in's access token", func(t *testing.T) {
			access, refresh := env.NewSession(t, u) // scoped to u's default workspace, the team
			if org, _, _ := testenv.TokenOrg(t, access); org != team {
				t.Fatalf("sign-in token org = %s; want the team %s", org, team)
			}
			for _, c := range append([]introspector{caller}, apps...) {
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
			for _, c := range append([]introspector{caller}, apps...) {
				c.wantInactive(t, env, refresh)
			}
			env.Do(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": refresh}).Want(t, 200)
			for _, c := range append([]introspector{caller}, apps...) {
				c.wantInactive(t, env, access) // revoked
			}
		})

		t.Run("an OAuth grant's access and refresh tokens", func(t *testing.T) {
			access, refresh := basic.grant(t, env, b)
			want := map[string]any{"sub": u.UserID, "org_id": team, "client_id": basic.clientID, "token_type": "Bearer"}
			caller.wantActive(t, env, access, want)
			for _, c := range apps {
				c.wantActive(t, env, access, want) // any resource server of the workspace
			}
			caller2.wantInactive(t, env, access)
			app2.wantInactive(t, env, access)
			// The refresh token: for the application it was issued to only.
			m := basic.caller().wantActive(t, env, refresh, map[string]any{"sub": u.UserID, "org_id": team, "client_id": basic.clientID,
				"token_type": "refresh_token", "iss": env.URL})
			if _, ok := m["aud"]; ok {
				t.Fatalf("a refresh token answered with aud: %v", m)
			}
			post.caller().wantInactive(t, env, refresh) // another client of the same workspace
			jwt.caller().wantInactive(t, env, refresh)
			caller.wantInactive(t, env, refresh) // a workspace key is no client
			app2.wantInactive(t, env, refresh)   // another client of another workspace
			caller2.wantInactive(t, env, refresh)
			// Rotated: the old refresh token is no longer live, its successor is.
			next := basic.post(t, env, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}).Want(t, 200)
			basic.caller().wantInactive(t, env, refresh)
			basic.caller().wantActive(t, env, next.Str("refresh_token"), map[string]any{"token_type": "refresh_token"})
			basic.caller().wantActive(t, env, next.Str("access_token"), want)
			// Revoked (RFC 7009) by its application: both end.
			wantRevokeOK(t, basic.post(t, env, "/oauth/revoke", url.Values{"token": {next.Str("refresh_token")}}))
			for _, tok := range []string{access, next.Str("access_token"), next.Str("refresh_token")} {
				for _, c := range append([]introspector{caller}, apps...) {
					c.wantInactive(t, env, tok)
				}
			}
		})

		t.Run("each application's own refresh token", func(t *testing.T) {
			for _, a := range []*app{post, jwt} {
				access, refresh := a.grant(t, env, b)
				a.caller().wantActive(t, env, refresh, map[string]any{"client_id": a.clientID, "token_type": "refresh_token"})
				basic.caller().wantInactive(t, env, refresh)
				basic.caller().wantActive(t, env, access, map[string]any{"client_id": a.clientID})
			}
		})

		t.Run("another client's tokens in the same workspace", func(t *testing.T) {
			// A dynamically registered client and a public application of
			// the workspace.
			third := &app{clientID: registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}}), method: "none", org: team}
			public := registerApp(t, env, owner.Token, team, "none", nil)
			for _, c := range []*app{third, public} {
				access, refresh := c.grant(t, env, b)
				// An access token of the workspace is any resource server's of it...
				for _, a := range apps {
					a.wantActive(t, env, access, map[string]any{"client_id": c.clientID, "org_id": team})
					// ...a refresh token only its own client's.
					a.wantInactive(t, env, refresh)
				}
				// A public client may not introspect at all, even its own.
				wantCallerRefused(t, c.caller().introspect(t, env, refresh, ""), "invalid_client")
			}
		})

		t.Run("a grant in another workspace", func(t *testing.T) {
			// A client's grant in u's personal workspace...
			dyn := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
			access, refresh := (&app{clientID: dyn, method: "none", org: u.OrgID}).grant(t, env, b)
			for _, c := range append([]introspector{caller}, apps...) {
				c.wantInactive(t, env, access)
				c.wantInactive(t, env, refresh)
			}
			// ...and another workspace's application's grant: its own
			// application learns of it, the team's callers do not.
			b2 := env.NewBrowser(t)
			signIn(t, b2, owner2)
			access, refresh = other.grant(t, env, b2)
			app2.wantActive(t, env, refresh, map[string]any{"client_id": other.clientID, "org_id": team2})
			app2.wantActive(t, env, access, map[string]any{"client_id": other.clientID, "org_id": team2})
			caller2.wantActive(t, env, access, map[string]any{"org_id": team2})
			for _, c := range append([]introspector{caller}, apps...) {
				c.wantInactive(t, env, access)
				c.wantInactive(t, env, refresh)
			}
		})

		t.Run("workspace and personal key tokens", func(t *testing.T) {
			k, keyID := keyCaller(t, env, owner.Token, team)
			caller.wantActive(t, env, k.bearer, map[string]any{"sub": keyID, "org_id": team, "token_type": "Bearer"})
			for _, a := range apps {
				a.wantActive(t, env, k.bearer, map[string]any{"sub": keyID})
			}
			caller2.wantInactive(t, env, k.bearer)
			app2.wantInactive(t, env, k.bearer)
			personal := env.CreateUserKey(t, u.Token, map[string]any{"name": "cli", "org_id": team})
			if s := personal.Str("api_key.secret"); !strings.HasPrefix(s, "svc_u_") {
				t.Fatalf("user key secret %q; want svc_u_", s)
			}
			ptok := env.Exchange(t, personal.Str("api_key.secret")).Want(t, 200).Str("access_token")
			caller.wantActive(t, env, ptok, map[string]any{"sub": u.UserID, "org_id": team})
			basic.caller().wantActive(t, env, ptok, map[string]any{"sub": u.UserID, "org_id": team})
			mine := env.Exchange(t, env.CreateUserKey(t, u.Token, map[string]any{"name": "mine"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
			caller.wantInactive(t, env, mine) // a personal key of u's personal workspace
			post.caller().wantInactive(t, env, mine)
			// Revoked keys.
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/api-keys/"+keyID, owner.Token, nil).Want(t, 200)
			env.Do(t, "DELETE", "/v1/me/api-keys/"+personal.Str("api_key.id"), u.Token, nil).Want(t, 200)
			for _, c := range append([]introspector{caller}, apps...) {
				c.wantInactive(t, env, k.bearer)
				c.wantInactive(t, env, ptok)
			}
			// A revoked key's token is no caller any more.
			wantCallerRefused(t, k.introspect(t, env, ptok, ""), "invalid_token")
		})

		t.Run("a member removed", func(t *testing.T) {
			m := env.Join(t, owner, team, "member")
			caller.wantActive(t, env, m.Token, map[string]any{"sub": m.UserID})
			jwt.caller().wantActive(t, env, m.Token, map[string]any{"sub": m.UserID})
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/members/"+m.UserID, owner.Token, nil).Want(t, 200)
			caller.wantInactive(t, env, m.Token)
			jwt.caller().wantInactive(t, env, m.Token)
		})

		t.Run("garbage", func(t *testing.T) {
			access, refresh := basic.grant(t, env, b)
			sid, _, _ := strings.Cut(refresh, ".")
			dot := strings.LastIndex(access, ".")
			for _, tok := range []string{
				"nope", "a.b.c", "\u00e9t\u00e9", strings.Repeat("x", 1500), strings.Repeat("y", 20000),
				sid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // the session's id with a forged secret
				access[:dot+1] + "AAAA" + access[dot+5:],             // a forged signature
				sid,
			} {
				for _, c := range append([]introspector{caller}, apps...) {
					c.wantInactive(t, env, tok)
				}
			}
		})

		t.Run("expired", func(t *testing.T) {
			access, refresh := basic.grant(t, env, b)
			signin, _ := env.NewSession(t, u)
			k, _ := keyCaller(t, env, owner.Token, team)
			secret := env.CreateOrgKey(t, owner.Token, team, map[string]any{"name": "later", "role": "member"}).Str("api_key.secret")
			env.Clock.Advance(61 * time.Minute) // past every access token's hour
			fresh := introspector{bearer: env.Exchange(t, secret).Want(t, 200).Str("access_token")}
			wantCallerRefused(t, caller.introspect(t, env, signin, ""), "invalid_token") // the caller's own token expired too
			for _, tok := range []string{access, signin, k.bearer} {
				for _, c := range append([]introspector{fresh}, apps...) {
					c.wantInactive(t, env, tok)
				}
			}
			basic.caller().wantActive(t, env, refresh, map[string]any{"token_type": "refresh_token"})
			env.Clock.Advance(31 * 24 * time.Hour) // past the refresh token's 30 days
			basic.caller().wantInactive(t, env, refresh)
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
		t.Run("a public workspace application", func(t *testing.T) {
			public := registerApp(t, env, owner.Token, team, "none", nil)
			wantCallerRefused(t, public.caller().introspect(t, env, live, ""), "invalid_client")
			wantCallerRefused(t, introspector{form: url.Values{"client_id": {public.clientID}, "client_secret": {"x"}}}.introspect(t, env, live, ""), "invalid_client")
		})
		t.Run("wrong credentials", func(t *testing.T) {
			for _, method := range []string{"client_secret_basic", "client_secret_post"} {
				a := registerApp(t, env, owner.Token, team, method, nil)
				a.caller().wantActive(t, env, live, nil)
				wrong := *a
				wrong.secret += "x"
				wantCallerRefused(t, wrong.caller().introspect(t, env, live, ""), "invalid_client")
				other := *a // the secret by the method it was not registered for
				other.method = map[string]string{"client_secret_basic": "client_secret_post", "client_secret_post": "client_secret_basic"}[method]
				wantCallerRefused(t, other.caller().introspect(t, env, live, ""), "invalid_client")
				none := *a
				none.method = "none"
				wantCallerRefused(t, none.caller().introspect(t, env, live, ""), "invalid_client")
			}
		})
		t.Run("private_key_jwt assertions", func(t *testing.T) {
			a := registerApp(t, env, owner.Token, team, "private_key_jwt", nil)
			a.caller().wantActive(t, env, live, nil)
			now := env.Clock.Now()
			claims := func(aud string) map[string]any {
				return map[string]any{"iss": a.clientID, "sub": a.clientID, "aud": aud, "exp": now.Add(time.Minute).Unix(), "jti": testenv.RandomHex(8)}
			}
			once := a.keys.sign(t, jose.ES256, claims(env.URL+"/oauth/introspect"))
			r := postForm(t, env, "/oauth/introspect", assertionForm(url.Values{"token": {live}}, once))
			if r.Status != http.StatusOK || r.JSON()["active"] != true {
				t.Fatalf("introspection with an assertion = %d %s", r.Status, r.Body)
			}
			// Replayed: refused, and the caller is told nothing.
			wantCallerRefused(t, postForm(t, env, "/oauth/introspect", assertionForm(url.Values{"token": {live}}, once)), "invalid_client")
			// Another audience, another client's keys.
			wantCallerRefused(t, postForm(t, env, "/oauth/introspect", assertionForm(url.Values{"token": {live}},
				a.keys.sign(t, jose.ES256, claims("https://elsewhere.example/introspect")))), "invalid_client")
			wantCallerRefused(t, postForm(t, env, "/oauth/introspect", assertionForm(url.Values{"token": {live}},
				newAssertionKeys(t).sign(t, jose.ES256, claims(env.URL+"/oauth/introspect")))), "invalid_client")
		})
		t.Run("a deleted application", func(t *testing.T) {
			a := registerApp(t, env, owner.Token, team, "client_secret_basic", nil)
			a.caller().wantActive(t, env, live, nil)
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/applications/"+a.id, owner.Token, nil).Want(t, 200)
			wantCallerRefused(t, a.caller().introspect(t, env, live, ""), "invalid_client")
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
		t.Run("a rotated secret", func(t *testing.T) {
			a := registerApp(t, env, owner.Token, team, "client_secret_post", nil)
			rotate := func(grace int) string {
				return env.Do(t, "POST", "/v1/orgs/"+team+"/applications/"+a.id+"/secret", owner.Token, map[string]any{"grace_seconds": grace}).Want(t, 200).Str("client_secret")
			}
			old, fresh := *a, *a
			fresh.secret = rotate(600)
			old.caller().wantActive(t, env, live, nil) // within the grace
			fresh.caller().wantActive(t, env, live, nil)
			env.Clock.Advance(601 * time.Second)
			wantCallerRefused(t, old.caller().introspect(t, env, live, ""), "invalid_client") // after it
			fresh.caller().wantActive(t, env, live, nil)
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
		rp := registerApp(t, env, owner.Token, team, "client_secret_basic", nil)
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
		t.Run("a calling application deleted", func(t *testing.T) {
			gone := registerApp(t, env, owner.Token, team, "client_secret_post", nil)
			for _, in := range instances {
				gone.caller().wantActive(t, in, u.Token, nil)
			}
			env.Do(t, "DELETE", "/v1/orgs/"+team+"/applications/"+gone.id, owner.Token, nil).Want(t, 200)
			for _, in := range instances {
				wantCallerRefused(t, gone.caller().introspect(t, in, u.Token, ""), "invalid_client")
			}
		})
		for name, revoke := range map[string]func(access, refresh string){
			"an access token revoked at the revocation endpoint": func(access, _ string) {
				wantRevokeOK(t, rp.post(t, env, "/oauth/revoke", url.Values{"token": {access}}))
			},
			"the grant deleted by its user": func(access, _ string) {
				grants := env.Do(t, "GET", "/v1/me/grants", u.Token, nil).Want(t, 200).List(t, "grants")
				for _, g := range grants {
					env.Do(t, "DELETE", "/v1/me/grants/"+g["id"].(string), u.Token, nil).Want(t, 200)
				}
			},
		} {
			t.Run(name, func(t *testing.T) {
				access, refresh := rp.grant(t, env, b)
				for _, in := range instances {
					caller.wantActive(t, in, access, map[string]any{"client_id": rp.clientID})
					rp.caller().wantActive(t, in, access, map[string]any{"client_id": rp.clientID})
				}
				revoke(access, refresh)
				deadline := time.Now().Add(2 * time.Second)
				for i, in := range instances {
					for _, c := range []introspector{caller, rp.caller()} {
						for {
							r := c.introspect(t, in, access, "")
							if r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == inactive {
								break
							}
							if time.Now().After(deadline) {
								t.Fatalf("instance %d: introspection after the revocation = %d %s; want %s within 2 s", i, r.Status, r.Body, inactive)
							}
							time.Sleep(10 * time.Millisecond)
						}
					}
					rp.caller().wantInactive(t, in, refresh) // the grant's session ended
				}
			})
		}
	})
}
