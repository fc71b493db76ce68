package web

import (
	"net/http"
	"slices"

	"github.com/gatehouse/gatehouse/internal/accounts"
)

// handleToolAPI answers "/{tool}/v1/…" until the tool APIs exist: without a
// valid token 401 with the RFC 9728 pointer to the resource metadata, so
// OAuth clients (MCP) find the authorization server; 403 naming the tool
// when the token's workspace has it disabled; else 404.
func (s *Server) handleToolAPI(tool string) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			challenge := `Bearer resource_metadata="` + s.resourceMetadataURL("/"+tool) + `"`
			if r.Header.Get("Authorization") != "" {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			return err
		}
		if !slices.Contains(p.Tools, tool) {
			return accounts.Errorf(accounts.KindForbidden, "the %s tool is not enabled for this workspace", tool)
		}
		return accounts.Errorf(accounts.KindNotFound, "not found")
	})
}

func (s *Server) resourceMetadataURL(path string) string {
	return s.oauth.ResourceMetadataURL(path)
}
