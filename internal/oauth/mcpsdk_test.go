package oauth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMCPGoSDK runs the strictest client found, the Go MCP SDK's
// auth.AuthorizationCodeHandler, from a tool API's 401 to a working token:
// protected resource metadata (RFC 9728), discovery (issuer checked, PKCE
// required, iss checked against the advertisement), dynamic registration,
// PKCE and the code exchange with resource. The browser step is the
// hosted consent page, driven by a cookie-keeping HTTP client.
func TestMCPGoSDK(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		const callback = "http://127.0.0.1:47211/oauth/callback"
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "MCP Go SDK test", RedirectURIs: []string{callback}, GrantTypes: []string{"authorization_code", "refresh_token"},
				TokenEndpointAuthMethod: "none"}},
			RedirectURL: callback,
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				back := consentAt(t, b, args.URL, a.OrgID)
				q := back.Query()
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		resource := env.URL + "/tasks/v1/issues"
		req, _ := http.NewRequest("GET", resource, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unauthenticated tool call: %d", res.StatusCode)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := h.Authorize(ctx, req, res); err != nil {
			t.Fatal(err)
		}
		ts, err := h.TokenSource(ctx)
		if err != nil || ts == nil {
			t.Fatalf("token source: %v", err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		aud := testenv.Claims(t, tok.AccessToken)["aud"].([]any)
		if len(aud) != 2 || aud[1] != resource {
			t.Fatalf("aud = %v; want the resource %s", aud, resource)
		}
		// Authenticated now: the Tasks API answers (an empty list), not 401.
		env.Do(t, "GET", "/tasks/v1/issues", tok.AccessToken, nil).Want(t, http.StatusOK)
		grants := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200)
		if g := grants.Get("grants").([]any); len(g) != 1 || g[0].(map[string]any)["client_name"] != "MCP Go SDK test" {
			t.Fatalf("grants = %s", grants.Body)
		}
	})
}
