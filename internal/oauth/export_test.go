package oauth

import (
	"net/http"
	"net/url"
)

// SetClientAuth makes s authenticate the introspection callers that
// present client credentials with f: a stand-in for a confidential
// workspace application until such clients authenticate here.
func SetClientAuth(s *Server, f func(r *http.Request, form url.Values) (*Client, error)) {
	s.clientAuth = f
}

// AuthenticateClient is s.authenticateClient.
func AuthenticateClient(s *Server, r *http.Request, form url.Values) (*Client, error) {
	return s.authenticateClient(r, form)
}
