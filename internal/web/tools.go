package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// Tool is authed for a tool API: without a valid token 401 with the RFC
// 9728 pointer to the resource metadata, so OAuth clients (MCP) find the
// authorization server; the caller's live standing in the token's
// workspace is checked on every request (the Authenticator's ToolAccess: a
// removed member or a deleted org 404, a deleted account or revoked org key
// 401); 403 naming the tool when the token's workspace has it disabled.
func (s *Server) Tool(tool string, h AuthedFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err == nil && p.Pending {
			return gatehouse.ErrSecondFactor
		}
		if err == nil {
			err = s.auth.ToolAccess(r.Context(), p)
		}
		if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
			w.Header().Set("WWW-Authenticate", s.toolChallenge(r, tool))
		}
		if err != nil {
			return err
		}
		if !slices.Contains(p.Tools, tool) {
			return gatehouse.Errorf(gatehouse.KindForbidden, "the %s tool is not enabled for this workspace", tool)
		}
		return h(w, r, p)
	})
}

// ToolFallbacks serves, for each of tools, the paths of "/{tool}/v1/" that
// no module's operation serves (all of them for a tool without an API or
// without a service): 401 and 403 as for any tool request, else 404.
func (s *Server) ToolFallbacks(tools []string) {
	for _, tool := range tools {
		s.mux.Handle("/"+tool+"/v1/", s.handleToolAPI(tool))
	}
}

// handleToolAPI answers the paths of "/{tool}/v1/" that no operation
// serves (every path of the tools without an API yet): 401 and 403 as for
// any tool request, else 404.
func (s *Server) handleToolAPI(tool string) http.Handler {
	return s.Tool(tool, func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error {
		return gatehouse.Errorf(gatehouse.KindNotFound, "not found")
	})
}

// toolChallenge is the WWW-Authenticate of a tool API's 401: it points to
// the resource metadata (RFC 9728 §5.1) when the authorization server is
// configured, and says invalid_token when a token was sent.
func (s *Server) toolChallenge(r *http.Request, tool string) string {
	var params []string
	if s.metadata != nil {
		params = append(params, `resource_metadata="`+s.metadata("/"+tool)+`"`)
	}
	if r.Header.Get("Authorization") != "" {
		params = append(params, `error="invalid_token"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}
