package oauth_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

const redirect = "http://127.0.0.1:53682/callback"

func oauthConfig(env *testenv.Env, clientID string) *oauth2.Config {
	return &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Endpoint: oauth2.Endpoint{
		AuthURL: env.URL + "/oauth/authorize", TokenURL: env.URL + "/oauth/token", DeviceAuthURL: env.URL + "/oauth/device/authorization"}}
}

// TestAuthorizationCodeXOAuth2 runs the code flow with PKCE, refresh and
// revocation through golang.org/x/oauth2 (auto-detected auth style: HTTP
// Basic with an empty secret first).
func TestAuthorizationCodeXOAuth2(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Acme Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"client_name": "Test CLI", "redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)

		cfg := oauthConfig(env, clientID)
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
		verifier := oauth2.GenerateVerifier()
		resource := env.URL + "/tasks"
		authURL := cfg.AuthCodeURL("st-123", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
		page := b.Get(t, authURL)
		if !strings.Contains(page.Body, "Test CLI") || !strings.Contains(page.Body, "Acme Team") {
			t.Fatalf("consent page does not name the client and the workspaces: %s", page.Body)
		}
		if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action 'self' http://127.0.0.1:53682") {
			t.Fatalf("consent CSP = %q", csp)
		}
		back := consentAt(t, b, authURL, team)
		q := back.Query()
		if q.Get("state") != "st-123" || q.Get("iss") != env.URL || q.Get("code") == "" {
			t.Fatalf("redirect = %s; want code, state st-123 and iss %s", back, env.URL)
		}
		if got := back.Scheme + "://" + back.Host + back.Path; got != redirect {
			t.Fatalf("redirected to %s; want %s", got, redirect)
		}

		tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
		if err != nil {
			t.Fatal(err)
		}
		if tok.TokenType != "Bearer" || tok.RefreshToken == "" || time.Until(tok.Expiry) < 50*time.Minute {
			t.Fatalf("token = %+v; want a Bearer token with a refresh token, valid about an hour", tok)
		}
		c := testenv.Claims(t, tok.AccessToken)
		org := c["org"].(map[string]any)
		if c["via"] != "oauth" || org["id"] != team || org["role"] != "admin" || len(org["tools"].([]any)) != 7 {
			t.Fatalf("claims = %v; want via oauth in the team org as admin with 7 tools", c)
		}
		if aud := c["aud"].([]any); len(aud) != 2 || aud[0] != "gatehouse" || aud[1] != resource {
			t.Fatalf("aud = %v; want [gatehouse %s]", aud, resource)
		}
		me := env.Do(t, "GET", "/v1/auth/me", tok.AccessToken, nil).Want(t, 200)
		if me.Str("org.id") != team {
			t.Fatalf("me org = %s; want %s", me.Str("org.id"), team)
		}
		// A token bound to the Tasks API (RFC 8707) is refused by the rest of
		// the accounts API (TestAudienceScopeMatrix covers the rest).
		env.Do(t, "GET", "/v1/me/grants", tok.AccessToken, nil).Want(t, 401)
		grants := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200)
		list := grants.Get("grants").([]any)
		if len(list) != 1 || list[0].(map[string]any)["client_id"] != clientID || list[0].(map[string]any)["client_name"] != "Test CLI" ||
			list[0].(map[string]any)["org_id"] != team {
			t.Fatalf("grants = %s", grants.Body)
		}

		// Refresh through the token source once the access token expires.
		tok.Expiry = time.Now().Add(-time.Minute)
		fresh, err := cfg.TokenSource(ctx, tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		if fresh.RefreshToken == tok.RefreshToken || testenv.Claims(t, fresh.AccessToken)["via"] != "oauth" {
			t.Fatalf("refresh did not rotate: %+v", fresh)
		}
		if org := testenv.Claims(t, fresh.AccessToken)["org"].(map[string]any); org["id"] != team {
			t.Fatalf("refreshed org = %v; want %s", org, team)
		}
		// The rotated token is dead; another client cannot use the fresh one.
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}}), 400, "invalid_grant")
		other := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {other}}), 400, "invalid_grant")
		// Another resource than the grant's: invalid_target (RFC 8707), and
		// the token is not used up by the refusal.
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {clientID},
			"resource": {env.URL + "/notes"}}), 400, "invalid_target")
		same := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {clientID}, "resource": {resource}})
		if same.Status != 200 {
			t.Fatalf("refresh with the grant's resource after a refused one: %d %s", same.Status, same.Body)
		}
		fresh.RefreshToken = same.Str("refresh_token")

		// Revoking the grant kills its refresh token at once.
		gid := list[0].(map[string]any)["id"].(string)
		env.Do(t, "DELETE", "/v1/me/grants/"+gid, a.Access, nil).Want(t, 200)
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {clientID}}), 400, "invalid_grant")
	})
}

// exchangeForm is a code exchange with the verifier.
func exchangeForm(clientID, code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "client_id": {clientID}, "redirect_uri": {redirect}}
}

// approvedCode runs the browser part of the flow and returns a fresh code.
func approvedCode(t *testing.T, env *testenv.Env, b *testenv.Browser, a *testenv.Account, clientID, verifier string) string {
	t.Helper()
	authURL := oauthConfig(env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	return consentAt(t, b, authURL, a.OrgID).Query().Get("code")
}

func TestCodeSingleUseAndExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		verifier := oauth2.GenerateVerifier()

		t.Run("wrong verifier leaves the code usable", func(t *testing.T) {
			code := approvedCode(t, env, b, a, clientID, verifier)
			wantOAuthError(t, tokenPost(t, env, exchangeForm(clientID, code, oauth2.GenerateVerifier())), 400, "invalid_grant")
			wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID}}), 400, "invalid_request")
			tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
		})
		t.Run("second use revokes what the first issued", func(t *testing.T) {
			code := approvedCode(t, env, b, a, clientID, verifier)
			first := tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
			if first.Str("token_type") != "Bearer" {
				t.Fatalf("token_type = %q", first.Str("token_type"))
			}
			if _, ok := first.Get("expires_in").(float64); !ok {
				t.Fatalf("expires_in is not a number: %s", first.Body)
			}
			wantOAuthError(t, tokenPost(t, env, exchangeForm(clientID, code, verifier)), 400, "invalid_grant")
			wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Str("refresh_token")}, "client_id": {clientID}}), 400, "invalid_grant")
		})
		t.Run("a refresh token reused after rotation revokes the session", func(t *testing.T) {
			code := approvedCode(t, env, b, a, clientID, verifier)
			first := tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
			refresh := func(rt string) *testenv.Resp {
				return tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}})
			}
			second := refresh(first.Str("refresh_token")).Want(t, 200)
			env.Clock.Advance(11 * time.Second) // past the two-tabs window
			wantOAuthError(t, refresh(first.Str("refresh_token")), 400, "invalid_grant")
			wantOAuthError(t, refresh(second.Str("refresh_token")), 400, "invalid_grant")
		})
		t.Run("a code expires after 60 s", func(t *testing.T) {
			code := approvedCode(t, env, b, a, clientID, verifier)
			env.Clock.Advance(61 * time.Second)
			wantOAuthError(t, tokenPost(t, env, exchangeForm(clientID, code, verifier)), 400, "invalid_grant")
		})
		t.Run("a code is bound to its client", func(t *testing.T) {
			code := approvedCode(t, env, b, a, clientID, verifier)
			other := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
			wantOAuthError(t, tokenPost(t, env, exchangeForm(other, code, verifier)), 400, "invalid_grant")
		})
	})
}

// TestCodeRace: of 20 concurrent exchanges of one code exactly one wins.
func TestCodeRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		verifier := oauth2.GenerateVerifier()
		code := approvedCode(t, env, b, a, clientID, verifier)
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := env.Client.PostForm(env.URL+"/oauth/token", exchangeForm(clientID, code, verifier))
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				statuses[i] = res.StatusCode
			}()
		}
		wg.Wait()
		if n := len(slices.DeleteFunc(slices.Clone(statuses), func(s int) bool { return s != 200 })); n != 1 {
			t.Fatalf("statuses = %v; want exactly one 200", statuses)
		}
		for _, s := range statuses {
			if s != 200 && s != 400 {
				t.Fatalf("statuses = %v; want 200 or 400 only", statuses)
			}
		}
	})
}

func TestTokenClientAuthentication(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		post := func(form url.Values, user, pass string) *testenv.Resp {
			req, _ := http.NewRequest("POST", env.URL+"/oauth/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if user != "" {
				req.SetBasicAuth(user, pass)
			}
			res, err := env.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			data, _ := io.ReadAll(res.Body)
			return &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: data}
		}
		code := url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "code_verifier": {oauth2.GenerateVerifier()}}
		// Basic with an empty secret identifies the client: the code is what fails.
		wantOAuthError(t, post(code, clientID, ""), 400, "invalid_grant")
		wantOAuthError(t, post(code, clientID, "secret"), 401, "invalid_client")
		wantOAuthError(t, post(code, "", ""), 401, "invalid_client")
		withID := url.Values{"client_id": {"00000000-0000-4000-8000-000000000000"}}
		for k, v := range code {
			withID[k] = v
		}
		wantOAuthError(t, post(withID, "", ""), 401, "invalid_client")
		wantOAuthError(t, post(url.Values{"grant_type": {"pass\"word\\é"}, "client_id": {clientID}}, "", ""), 400, "unsupported_grant_type")
		wantOAuthError(t, post(url.Values{"client_id": {clientID}}, "", ""), 400, "invalid_request")
	})
}

// A grant is bound to the workspace it was made for: once the user is no
// longer a member there, its refresh token is refused rather than moved to
// another workspace.
func TestRefreshAfterLeavingTheGrantOrg(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Acme Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		verifier := oauth2.GenerateVerifier()
		code := consentAt(t, b, oauthConfig(env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), team).Query().Get("code")
		tok := tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
		refreshed := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Str("refresh_token")}, "client_id": {clientID}}).Want(t, 200)
		if org := testenv.Claims(t, refreshed.Str("access_token"))["org"].(map[string]any); org["id"] != team {
			t.Fatalf("refreshed org = %v; want %s", org, team)
		}
		if err := env.Store.RemoveMember(context.Background(), team, a.UserID, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshed.Str("refresh_token")}, "client_id": {clientID}}), 400, "invalid_grant")
	})
}
