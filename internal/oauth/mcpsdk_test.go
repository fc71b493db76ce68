package oauth_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

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

// TestMCPServerGoSDK runs the Go MCP SDK's authorization handler from the
// MCP server's own 401: its protected resource metadata names the MCP
// URL, the token is requested with resource={mcp_url} and bound to it,
// and the SDK's client then lists and calls the server's tools with it.
func TestMCPServerGoSDK(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		const callback = "http://127.0.0.1:47212/oauth/callback"
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "MCP Go SDK client", RedirectURIs: []string{callback}, GrantTypes: []string{"authorization_code", "refresh_token"},
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
		resource := env.URL + "/mcp"
		req, _ := http.NewRequest("POST", resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unauthenticated MCP request: %d", res.StatusCode)
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
		if aud := testenv.Claims(t, tok.AccessToken)["aud"].([]any); len(aud) != 2 || aud[1] != resource {
			t.Fatalf("aud = %v; want the MCP URL %s", aud, resource)
		}
		env.Do(t, "GET", "/tasks/v1/issues", tok.AccessToken, nil).Want(t, http.StatusUnauthorized)
		client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: oauth2.NewClient(ctx, ts), DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("tools/list: %v %v", tools, err)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "links_create_link", Arguments: map[string]any{"destinationUrl": "https://example.com/"}})
		if err != nil || r.IsError {
			t.Fatalf("links_create_link: %v %+v", err, r)
		}
	})
}
