package oauth

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// serverMetadata is the discovery document, served both as authorization
// server metadata (RFC 8414) and as the OpenID Provider configuration
// (OIDC Discovery 1.0): one document, so the two never disagree. RFC 8414
// §2 takes its fields from the same registry, the OpenID ones included.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	UserinfoEndpoint                  string   `json:"userinfo_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	IntrospectionEndpoint             string   `json:"introspection_endpoint"`
	EndSessionEndpoint                string   `json:"end_session_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	ACRValuesSupported                []string `json:"acr_values_supported"`
	ClaimsSupported                   []string `json:"claims_supported"`
	ClaimTypesSupported               []string `json:"claim_types_supported"`
	PromptValuesSupported             []string `json:"prompt_values_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgs      []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethods  []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	RequestParameterSupported         bool     `json:"request_parameter_supported"`
	RequestURIParameterSupported      bool     `json:"request_uri_parameter_supported"`
	ClaimsParameterSupported          bool     `json:"claims_parameter_supported"`
	BackchannelLogoutSupported        bool     `json:"backchannel_logout_supported"`
	BackchannelLogoutSessionSupported bool     `json:"backchannel_logout_session_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}

// claimsSupported are the claims of ID tokens and UserInfo.
var claimsSupported = []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "at_hash", "azp", "sid",
	"name", "picture", "email", "email_verified"}

// Metadata returns the discovery document (both well-known addresses).
func (s *Server) Metadata() any {
	// The client authentication methods of the token, revocation and
	// introspection endpoints: public clients send none; confidential
	// workspace applications a secret (Basic or in the body) or an RFC
	// 7523 assertion. Introspection callers are always confidential.
	auth := []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"}
	grants := []string{GrantAuthorizationCode, GrantRefreshToken, GrantDeviceCode}
	if s.assertions != nil {
		grants = append(grants, GrantJWTBearer, GrantTokenExchange) // ID-JAG, both ways
	}
	return serverMetadata{
		Issuer:                            s.issuer,
		AuthorizationEndpoint:             s.issuer + "/oauth/authorize",
		TokenEndpoint:                     s.issuer + "/oauth/token",
		UserinfoEndpoint:                  s.issuer + "/oauth/userinfo",
		RegistrationEndpoint:              s.issuer + "/oauth/register",
		DeviceAuthorizationEndpoint:       s.issuer + "/oauth/device/authorization",
		RevocationEndpoint:                s.issuer + "/oauth/revoke",
		IntrospectionEndpoint:             s.issuer + "/oauth/introspect",
		EndSessionEndpoint:                s.issuer + "/oauth/logout",
		JWKSURI:                           s.issuer + "/.well-known/jwks.json", // internal/keys
		ScopesSupported:                   append(slices.Clone(OIDCScopes), toolScopes...),
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               grants,
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  slices.Clone(IDTokenAlgs),
		ACRValuesSupported:                slices.Clone(acrValues),
		ClaimsSupported:                   slices.Clone(claimsSupported),
		ClaimTypesSupported:               []string{"normal"},
		PromptValuesSupported:             []string{PromptNone, PromptLogin, PromptConsent, PromptSelectAccount},
		TokenEndpointAuthMethodsSupported: auth,
		TokenEndpointAuthSigningAlgs:      []string{"RS256", "ES256"},
		RevocationEndpointAuthMethods:     auth,
		IntrospectionEndpointAuthMethods:  auth[1:],
		CodeChallengeMethodsSupported:     []string{"S256"},
		BackchannelLogoutSupported:        true,
		BackchannelLogoutSessionSupported: true,
		ClientIDMetadataDocumentSupported: true,
		AuthorizationResponseIssSupported: true,
	}
}

// HandleMetadata handles "GET /.well-known/oauth-authorization-server"
// and "GET /.well-known/openid-configuration".
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

// MCPMetadataPath is the suffix of the MCP server's resource metadata
// ({api_url}/.well-known/oauth-protected-resource/mcp), wherever
// GATEHOUSE_MCP_URL points.
const MCPMetadataPath = "/mcp"

// ResourceMetadataURL is where the metadata of the resource at path (""
// for the API root, "/tasks" for a tool) is published.
func (s *Server) ResourceMetadataURL(path string) string {
	return s.apiURL + "/.well-known/oauth-protected-resource" + path
}

// HandleResourceMetadata handles "GET /.well-known/oauth-protected-resource"
// and its path-suffixed variants (RFC 9728 §3.1): the resource is the API
// URL followed by the suffix, whose first segment must name a tool, or the
// MCP server's URL for MCPMetadataPath.
func (s *Server) HandleResourceMetadata() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		const prefix = "/.well-known/oauth-protected-resource"
		suffix := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix), "/")
		resource, name, scopes := s.apiURL+suffix, "Gatehouse tool APIs", gatehouse.ToolScopes("")
		if suffix == MCPMetadataPath && s.mcpURL != "" {
			resource, name = s.mcpURL, "Gatehouse MCP server"
		} else if suffix != "" {
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
		writeBody(w, resourceMetadata{Resource: resource, AuthorizationServers: []string{s.issuer},
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
