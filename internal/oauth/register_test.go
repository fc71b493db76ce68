package oauth_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestRegister(t *testing.T) {
	cases := []struct {
		name       string
		body       any
		wantStatus int
		wantError  string
	}{
		{"loopback http", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb", "http://[::1]:8080/cb", "http://localhost:3000/cb"}}, 201, ""},
		{"https and auth method none", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "token_endpoint_auth_method": "none", "client_name": "App"}, 201, ""},
		{"private-use scheme", map[string]any{"redirect_uris": []string{"com.example.app:/oauth2redirect"}}, 201, ""},
		{"device only needs no redirect", map[string]any{"grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code"}}, 201, ""},
		{"confidential client", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "token_endpoint_auth_method": "client_secret_basic"}, 400, "invalid_client_metadata"},
		{"password grant", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "grant_types": []string{"password"}}, 400, "invalid_client_metadata"},
		{"implicit", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "response_types": []string{"token"}}, 400, "invalid_client_metadata"},
		{"http on a public host", map[string]any{"redirect_uris": []string{"http://app.example.com/cb"}}, 400, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://app.example.com/cb#x"}}, 400, "invalid_redirect_uri"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, 400, "invalid_redirect_uri"},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, 400, "invalid_redirect_uri"},
		{"view-source", map[string]any{"redirect_uris": []string{"view-source:https://app.example.com/cb"}}, 400, "invalid_redirect_uri"},
		{"chrome", map[string]any{"redirect_uris": []string{"chrome://settings/passwords"}}, 400, "invalid_redirect_uri"},
		{"ms-appinstaller", map[string]any{"redirect_uris": []string{"ms-appinstaller:?source=https://evil.example/app.msix"}}, 400, "invalid_redirect_uri"},
		{"data", map[string]any{"redirect_uris": []string{"data:text/html,hi"}}, 400, "invalid_redirect_uri"},
		{"file", map[string]any{"redirect_uris": []string{"file:///etc/passwd"}}, 400, "invalid_redirect_uri"},
		{"custom scheme without a dot", map[string]any{"redirect_uris": []string{"myapp:/callback"}}, 400, "invalid_redirect_uri"},
		{"empty label in the scheme", map[string]any{"redirect_uris": []string{"com..app:/callback"}}, 400, "invalid_redirect_uri"},
		{"ws", map[string]any{"redirect_uris": []string{"ws://127.0.0.1/cb"}}, 400, "invalid_redirect_uri"},
		{"no redirect for the code grant", map[string]any{"client_name": "x"}, 400, "invalid_redirect_uri"},
		{"not JSON", "{", 400, "invalid_client_metadata"},
		{"OpenID Connect fields", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "id_token_signed_response_alg": "ES256",
			"post_logout_redirect_uris": []string{"https://app.example.com/bye"}, "backchannel_logout_uri": "https://app.example.com/bcl"}, 201, ""},
		{"ID tokens unsigned", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "id_token_signed_response_alg": "none"}, 400, "invalid_client_metadata"},
		{"ID tokens with a shared secret", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "id_token_signed_response_alg": "HS256"}, 400, "invalid_client_metadata"},
		{"post-logout javascript", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "post_logout_redirect_uris": []string{"javascript:alert(1)"}}, 400, "invalid_client_metadata"},
		{"back-channel over http", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "backchannel_logout_uri": "http://app.example.com/bcl"}, 400, "invalid_client_metadata"},
		{"back-channel with a fragment", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "backchannel_logout_uri": "https://app.example.com/bcl#x"}, 400, "invalid_client_metadata"},
	}
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := env.Do(t, "POST", "/oauth/register", "", tc.body)
				if tc.wantError != "" {
					wantOAuthError(t, r, tc.wantStatus, tc.wantError)
					return
				}
				r.Want(t, http.StatusCreated)
				if r.Str("client_id") == "" || r.Str("token_endpoint_auth_method") != "none" || r.Get("client_secret") != nil {
					t.Fatalf("registration = %s; want a client_id, auth method none and no secret", r.Body)
				}
				if _, ok := r.Get("client_id_issued_at").(float64); !ok {
					t.Fatalf("client_id_issued_at is not a number: %s", r.Body)
				}
			})
		}
	})
}

func TestRegisterRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		md := map[string]any{"redirect_uris": []string{redirect}}
		for range 20 {
			env.Do(t, "POST", "/oauth/register", "", md).Want(t, http.StatusCreated)
		}
		r := env.Do(t, "POST", "/oauth/register", "", md)
		wantOAuthError(t, r, http.StatusTooManyRequests, "too_many_requests")
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("429 without Retry-After")
		}
	})
}
