package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/clientmeta"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/google/uuid"
)

// clientMetadata is the registration request and response (RFC 7591 §2);
// only what a public client needs is kept.
type clientMetadata struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	Contacts                []string `json:"contacts,omitempty"`
	TOSURI                  string   `json:"tos_uri,omitempty"`
	PolicyURI               string   `json:"policy_uri,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
	ApplicationType         string   `json:"application_type,omitempty"`
	// OpenID Connect registration (OIDC Dynamic Client Registration §2,
	// RP-Initiated Logout §3.1, Back-Channel Logout §2.2).
	IDTokenSignedResponseAlg string   `json:"id_token_signed_response_alg,omitempty"`
	PostLogoutRedirectURIs   []string `json:"post_logout_redirect_uris,omitempty"`
	BackchannelLogoutURI     string   `json:"backchannel_logout_uri,omitempty"`
	// ClientID is set in responses and in metadata documents.
	ClientID         string `json:"client_id,omitempty"`
	ClientIDIssuedAt int64  `json:"client_id_issued_at,omitempty"`
}

func invalidMetadata(format string, args ...any) *Error {
	return oauthErr("invalid_client_metadata", http.StatusBadRequest, format, args...)
}

func invalidRedirect(format string, args ...any) *Error {
	return oauthErr("invalid_redirect_uri", http.StatusBadRequest, format, args...)
}

// validate checks metadata of a public client and fills the defaults:
// auth method none, grant types authorization_code and refresh_token,
// response type code.
func (m *clientMetadata) validate() error {
	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = "none"
	case "none":
	default:
		return invalidMetadata("only public clients are supported: token_endpoint_auth_method must be none")
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{GrantAuthorizationCode, GrantRefreshToken}
	}
	code := false
	for _, g := range m.GrantTypes {
		switch g {
		case GrantAuthorizationCode:
			code = true
		case GrantRefreshToken, GrantDeviceCode:
		default:
			return invalidMetadata("unsupported grant type '%s'", g)
		}
	}
	if len(m.ResponseTypes) == 0 && code {
		m.ResponseTypes = []string{"code"}
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return invalidMetadata("unsupported response type '%s': only code", rt)
		}
	}
	if m.ResponseTypes == nil {
		m.ResponseTypes = []string{}
	}
	if code && len(m.RedirectURIs) == 0 {
		return invalidRedirect("redirect_uris is required for the authorization_code grant")
	}
	if len(m.RedirectURIs) > MaxRedirectURIs {
		return invalidRedirect("at most %d redirect URIs", MaxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	if m.RedirectURIs == nil {
		m.RedirectURIs = []string{}
	}
	if err := checkOIDCMetadata(m.IDTokenSignedResponseAlg, m.PostLogoutRedirectURIs, m.BackchannelLogoutURI); err != nil {
		return err
	}
	m.ClientName = strings.Join(strings.Fields(m.ClientName), " ")
	if len(m.ClientName) > 200 {
		return invalidMetadata("client_name must be at most 200 characters")
	}
	for _, u := range []string{m.ClientURI, m.LogoURI, m.TOSURI, m.PolicyURI} {
		if u != "" {
			if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
				return invalidMetadata("'%s' is not an http(s) URL", u)
			}
		}
	}
	return nil
}

// IDTokenAlgs are the algorithms a client may register for its ID tokens;
// the first is the default.
var IDTokenAlgs = clientmeta.IDTokenAlgs

// checkOIDCMetadata checks the OpenID Connect fields of a client's
// registration: a known ID token algorithm, post-logout redirect URIs by
// the rules of redirect URIs, and a back-channel logout URI that is an
// absolute https URL (http only on a loopback host) without a fragment
// (Back-Channel Logout 1.0 §2.2).
func checkOIDCMetadata(alg string, postLogout []string, backchannel string) error {
	if err := clientmeta.IDTokenAlg(alg); err != nil {
		return invalidMetadata("%v", err)
	}
	if len(postLogout) > MaxRedirectURIs {
		return invalidMetadata("at most %d post_logout_redirect_uris", MaxRedirectURIs)
	}
	for _, u := range postLogout {
		if err := clientmeta.RedirectURI(u); err != nil {
			return invalidMetadata("post_logout_redirect_uris: %v", err)
		}
	}
	if backchannel != "" {
		if err := clientmeta.BackchannelURI(backchannel); err != nil {
			return invalidMetadata("%v", err)
		}
	}
	return nil
}

// client is the Client the metadata registers under id.
func (m *clientMetadata) client(id string, doc []byte, at time.Time) *Client {
	return &Client{ID: id, Name: m.ClientName, RedirectURIs: m.RedirectURIs, GrantTypes: m.GrantTypes, Metadata: doc, CreatedAt: at,
		Scope: m.Scope, IDTokenAlg: m.IDTokenSignedResponseAlg, PostLogoutRedirectURIs: m.PostLogoutRedirectURIs,
		BackchannelLogoutURI: m.BackchannelLogoutURI}
}

// checkRedirectURI applies clientmeta.RedirectURI, answering
// invalid_redirect_uri.
func checkRedirectURI(raw string) error {
	if err := clientmeta.RedirectURI(raw); err != nil {
		return invalidRedirect("%v", err)
	}
	return nil
}

func isLoopbackHost(h string) bool { return clientmeta.LoopbackHost(h) }

// HandleRegister handles "POST /oauth/register" (RFC 7591): public clients
// only, answered 201 with the registered metadata and a new client_id.
func (s *Server) HandleRegister() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		cors(w)
		body, err := httpjson.ReadBody(r)
		if httpjson.TooBig(err) {
			return oauthErr("invalid_request", http.StatusRequestEntityTooLarge, "request body too large")
		}
		if err != nil {
			return invalidRequest("could not read the request body")
		}
		if httpjson.HasNUL(body) {
			return invalidMetadata("client metadata must not contain NUL characters")
		}
		var m clientMetadata
		if err := json.Unmarshal(body, &m); err != nil {
			return invalidMetadata("the body must be a JSON object of client metadata: %v", jsonProblem(err))
		}
		if err := m.validate(); err != nil {
			return err
		}
		now := s.clock()
		m.ClientID, m.ClientIDIssuedAt = uuid.NewString(), now.Unix()
		doc, err := json.Marshal(m)
		if err != nil {
			return serverError(err)
		}
		c := m.client(m.ClientID, doc, now)
		if err := s.store.CreateClient(r.Context(), c); err != nil {
			return serverError(err)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusCreated)
		writeBody(w, m)
		return nil
	})
}

func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return typeErr.Field + " has the wrong type"
	}
	return "not valid JSON"
}
