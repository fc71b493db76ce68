package oauth

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// serverMetadata is the authorization server metadata (RFC 8414).
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	JWKSURI                           string   `json:"jwks_uri"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}

// Metadata returns the discovery document.
func (s *Server) Metadata() any {
	return serverMetadata{
		Issuer:                            s.issuer,
		AuthorizationEndpoint:             s.issuer + "/oauth/authorize",
		TokenEndpoint:                     s.issuer + "/oauth/token",
		RegistrationEndpoint:              s.issuer + "/oauth/register",
		DeviceAuthorizationEndpoint:       s.issuer + "/oauth/device/authorization",
		RevocationEndpoint:                s.issuer + "/oauth/revoke",
		RevocationEndpointAuthMethods:     []string{"none"},
		JWKSURI:                           s.issuer + "/.well-known/jwks.json", // internal/keys
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{GrantAuthorizationCode, GrantRefreshToken, GrantDeviceCode},
		TokenEndpointAuthMethodsSupported: []string{"none"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClientIDMetadataDocumentSupported: true,
		AuthorizationResponseIssSupported: true,
	}
}

// HandleMetadata handles "GET /.well-known/oauth-authorization-server".
func (s *Server) HandleMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cors(w)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		writeBody(w, s.Metadata())
	})
}

// resourceMetadata is protected resource metadata (RFC 9728).
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	// ScopesSupported are the scopes the resource checks (RFC 9728 §2):
	// its tool's read and write scopes, every tool's at the API root.
	ScopesSupported []string `json:"scopes_supported"`
}

// ResourceMetadataURL is where the metadata of the resource at path (""
// for the API root, "/tasks" for a tool) is published.
func (s *Server) ResourceMetadataURL(path string) string {
	return s.apiURL + "/.well-known/oauth-protected-resource" + path
}

// HandleResourceMetadata handles "GET /.well-known/oauth-protected-resource"
// and its path-suffixed variants (RFC 9728 §3.1): the resource is the API
// URL followed by the suffix, whose first segment must name a tool.
func (s *Server) HandleResourceMetadata() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		const prefix = "/.well-known/oauth-protected-resource"
		suffix := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix), "/")
		name, scopes := "Gatehouse tool APIs", gatehouse.ToolScopes("")
		if suffix != "" {
			tool, _, _ := strings.Cut(strings.TrimPrefix(suffix, "/"), "/")
			if !workspace.IsTool(tool) {
				return oauthErr("not_found", http.StatusNotFound, "no protected resource at %s", suffix)
			}
			name, scopes = "Gatehouse "+tool+" API", gatehouse.ToolScopes(tool)
			if scopes == nil {
				scopes = []string{} // a tool without an API yet checks none
			}
		}
		cors(w)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		writeBody(w, resourceMetadata{Resource: s.apiURL + suffix, AuthorizationServers: []string{s.issuer},
			BearerMethodsSupported: []string{"header"}, ResourceName: name, ScopesSupported: scopes})
		return nil
	})
}

// cors lets browser-based clients (MCP inspectors, single-page apps) read
// the metadata and call the token endpoints: they carry no cookies, so any
// origin may.
func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
}

// HandlePreflight answers CORS preflight requests of the OAuth endpoints.
func (s *Server) HandlePreflight() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cors(w)
		w.Header().Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	})
}
