package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// grantPaths are an identity route and a tool API that an OAuth access
// token of the personal workspace may call.
var grantPaths = []string{"/v1/auth/me", "/tasks/v1/issues"}

// wantServes checks that token is served 200 on every instance.
func wantServes(t *testing.T, token string, instances ...*testenv.Env) {
	t.Helper()
	for i, in := range instances {
		for _, path := range grantPaths {
			if r := in.Call(t, "GET", path, token, nil); r.Status != http.StatusOK {
				t.Fatalf("instance %d: GET %s = %d %s; want 200", i, path, r.Status, r.Body)
			}
		}
	}
}

// wantRefusedWithin2s waits up to 2 s for every instance to refuse token
// with 401 on every path.
func wantRefusedWithin2s(t *testing.T, token string, instances ...*testenv.Env) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for i, in := range instances {
		for _, path := range grantPaths {
			for {
				r := in.Call(t, "GET", path, token, nil)
				if r.Status == http.StatusUnauthorized {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("instance %d: GET %s after revocation = %d %s; want 401 within 2 s", i, path, r.Status, r.Body)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}

// wantRevokeOK checks RFC 7009 §2.2's answer: 200 with an empty body.
func wantRevokeOK(t *testing.T, r *testenv.Resp) {
	t.Helper()
	if r.Status != http.StatusOK || len(r.Body) != 0 {
		t.Fatalf("revocation = %d %q; want 200 with an empty body", r.Status, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("revocation Cache-Control = %q; want no-store", r.Header.Get("Cache-Control"))
	}
}

// TestRevocation: RFC 7009 at /oauth/revoke (issue 25 item 4).
func TestRevocation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		other := env.Another(t)
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		b := env.NewBrowser(t)
		signIn(t, b, a)
		grant := func(t *testing.T) (access, refresh string) {
			verifier := oauth2.GenerateVerifier()
			r := tokenPost(t, env, exchangeForm(clientID, approvedCode(t, env, b, a, clientID, verifier), verifier)).Want(t, 200)
			return r.Str("access_token"), r.Str("refresh_token")
		}
		revoke := func(t *testing.T, client, tok, hint string) *testenv.Resp {
			form := url.Values{"token": {tok}, "client_id": {client}}
			if hint != "" {
				form.Set("token_type_hint", hint)
			}
			return postForm(t, env, "/oauth/revoke", form)
		}
		refresh := func(t *testing.T, rt string) *testenv.Resp {
			return tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}})
		}
		wantRefreshRefused := func(t *testing.T, rt string) {
			t.Helper()
			wantOAuthError(t, refresh(t, rt), 400, "invalid_grant")
		}

		t.Run("a refresh token ends its grant session", func(t *testing.T) {
			access, rt := grant(t)
			wantServes(t, access, env, other)
			wantRevokeOK(t, revoke(t, clientID, rt, "refresh_token"))
			wantRefreshRefused(t, rt)
			wantRefusedWithin2s(t, access, env, other)
		})
		t.Run("an access token is refused on another instance within 2 s", func(t *testing.T) {
			access, rt := grant(t)
			wantServes(t, access, env, other)
			wantRevokeOK(t, revoke(t, clientID, access, "access_token"))
			wantRefusedWithin2s(t, access, other, env)
			wantRefreshRefused(t, rt)
		})
		t.Run("the hint is a hint only", func(t *testing.T) {
			access, rt := grant(t)
			wantRevokeOK(t, revoke(t, clientID, rt, "access_token"))
			wantRefreshRefused(t, rt)
			wantRefusedWithin2s(t, access, env)
			access, rt = grant(t)
			wantRevokeOK(t, revoke(t, clientID, access, "refresh_token"))
			wantRefusedWithin2s(t, access, other)
			wantRefreshRefused(t, rt)
			access, _ = grant(t)
			wantRevokeOK(t, revoke(t, clientID, access, "id_token"))
			wantRefusedWithin2s(t, access, env)
		})
		t.Run("unknown, malformed and forged tokens revoke nothing", func(t *testing.T) {
			access, rt := grant(t)
			sid, _, _ := strings.Cut(rt, ".")
			dot := strings.LastIndex(access, ".")
			for _, tok := range []string{
				"nope", "a.b.c", "\u00e9t\u00e9", strings.Repeat("x", 1500),
				sid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // the session's id with a forged secret
				access[:dot+1] + "AAAA" + access[dot+5:],             // a forged signature
				sid,
			} {
				wantRevokeOK(t, revoke(t, clientID, tok, ""))
				wantRevokeOK(t, revoke(t, clientID, tok, "access_token"))
			}
			wantServes(t, access, env, other)
			refresh(t, rt).Want(t, 200)
		})
		t.Run("another client's tokens are not revoked", func(t *testing.T) {
			intruder := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
			access, rt := grant(t)
			wantRevokeOK(t, revoke(t, intruder, rt, "refresh_token"))
			wantRevokeOK(t, revoke(t, intruder, access, "access_token"))
			time.Sleep(1500 * time.Millisecond) // a revocation would have reached the instances by now
			wantServes(t, access, env, other)
			refresh(t, rt).Want(t, 200)
		})
		t.Run("a sign-in session's tokens are not revocable here", func(t *testing.T) {
			s := env.Register(t)
			wantRevokeOK(t, revoke(t, clientID, s.Access, ""))
			wantRevokeOK(t, revoke(t, clientID, s.Refresh, "refresh_token"))
			time.Sleep(1500 * time.Millisecond)
			wantServes(t, s.Access, env, other)
			env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": s.Refresh}).Want(t, 200)
		})
		t.Run("bad requests", func(t *testing.T) {
			wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"client_id": {clientID}}), 400, "invalid_request")
			wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {"x"}}), 401, "invalid_client")
			wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {"x"}, "client_id": {"00000000-0000-4000-8000-000000000000"}}), 401, "invalid_client")
			wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {"x"}, "client_id": {clientID}, "client_secret": {"s"}}), 401, "invalid_client")
			wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {"x", "y"}, "client_id": {clientID}}), 400, "invalid_request")
		})
		t.Run("an expired access token revokes nothing", func(t *testing.T) {
			access, rt := grant(t)
			env.Clock.Advance(61 * time.Minute)
			wantRevokeOK(t, revoke(t, clientID, access, "access_token"))
			next := refresh(t, rt).Want(t, 200)
			wantServes(t, next.Str("access_token"), env, other)
		})
	})
}

// TestRevocationMetadata: the discovery document names the endpoint.
func TestRevocationMetadata(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := env.Do(t, "GET", "/.well-known/oauth-authorization-server", "", nil).Want(t, 200)
		if r.Str("revocation_endpoint") != env.URL+"/oauth/revoke" {
			t.Fatalf("revocation_endpoint = %q", r.Str("revocation_endpoint"))
		}
		env.Do(t, "OPTIONS", "/oauth/revoke", "", nil).Want(t, http.StatusNoContent)
	})
}
