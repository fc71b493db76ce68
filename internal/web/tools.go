package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// Tool is authed for an operation of a tool API that does access (read or
// write; each tool's Mount declares it per route): without a valid token
// 401 with the RFC 9728 pointer to the resource metadata, so OAuth clients
// (MCP) find the authorization server; a token bound to other resources
// (RFC 8707) 401 invalid_token; the caller's live standing in the token's
// workspace is checked on every request (the Authenticator's ToolAccess: a
// removed member or a deleted org 404, a deleted account or revoked org key
// 401); 403 naming the tool when the token's workspace has it disabled;
// 403 insufficient_scope naming the scope the operation needs when the
// token asked for tool scopes and none of them allows it (the MCP step-up
// challenge).
func (s *Server) Tool(tool string, access gatehouse.Access, h AuthedFunc) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err == nil && p.Pending {
			return gatehouse.ErrSecondFactor
		}
		if err == nil && !s.reachesTool(p, tool) {
			err = errOtherResource
		}
		if err == nil {
			err = s.auth.ToolAccess(r.Context(), p)
		}
		if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
			w.Header().Set("WWW-Authenticate", s.toolChallenge(r, tool, err))
		}
		if err != nil {
			return err
		}
		if !slices.Contains(p.Tools, tool) {
			return gatehouse.Errorf(gatehouse.KindForbidden, "the %s tool is not enabled for this workspace", tool)
		}
		if !gatehouse.ScopeAllows(p.Scope, tool, access) {
			need := gatehouse.ToolScope(tool, access)
			if !slices.Contains(gatehouse.ScopeTools, tool) {
				// No scope names this tool, so none can be asked for.
				return gatehouse.Errorf(gatehouse.KindForbidden, "no scope allows the %s tool; this token asked for tool scopes", tool)
			}
			msg := "this access token's scope does not allow this operation; it needs " + need
			w.Header().Set("WWW-Authenticate", s.challenge(tool, "insufficient_scope", msg, need))
			return gatehouse.Errorf(gatehouse.KindForbidden, "%s", msg)
		}
		return h(w, r, p)
	})
}

// errOtherResource refuses a token bound (RFC 8707) to resources other
// than the API it is presented to.
var errOtherResource = gatehouse.Errorf(gatehouse.KindUnauthorized, "this access token was issued for another resource")

// reachesTool reports whether p's audience admits tool's API: a token
// bound to no resource reaches every API; a bound one only the tools its
// resources name (the API base names them all).
func (s *Server) reachesTool(p *gatehouse.Principal, tool string) bool {
	if len(p.Resources) == 0 {
		return true
	}
	for _, r := range p.Resources {
		if t := gatehouse.ResourceTool(r, s.apiURL); t == tool || t == gatehouse.AllTools {
			return true
		}
	}
	return false
}

// reachesAccounts reports whether p's audience admits the accounts API: a
// token bound to no resource does, a bound one only when Gatehouse itself
// (the issuer, the base URL) is among its resources.
func (s *Server) reachesAccounts(p *gatehouse.Principal) bool {
	if len(p.Resources) == 0 {
		return true
	}
	return slices.ContainsFunc(p.Resources, func(r string) bool { return s.issuer != "" && strings.TrimRight(r, "/") == s.issuer })
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
	found := func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error {
		return gatehouse.Errorf(gatehouse.KindNotFound, "not found")
	}
	read, write := s.Tool(tool, gatehouse.Read, found), s.Tool(tool, gatehouse.Write, found)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			read.ServeHTTP(w, r)
			return
		}
		write.ServeHTTP(w, r)
	})
}

// toolChallenge is the WWW-Authenticate of a tool API's 401: it points to
// the resource metadata (RFC 9728 §5.1) when the authorization server is
// configured, and says invalid_token, with err's message, when a token
// was sent.
func (s *Server) toolChallenge(r *http.Request, tool string, err error) string {
	if r.Header.Get("Authorization") == "" {
		return s.challenge(tool, "", "", "")
	}
	msg := "invalid access token"
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Message != "" {
		msg = e.Message
	}
	return s.challenge(tool, "invalid_token", msg, "")
}

// challenge is a Bearer challenge (RFC 6750 §3) of tool's API: the error
// code with its description and the scope an operation needs when given,
// and the resource metadata pointer when the authorization server is
// configured.
func (s *Server) challenge(tool, code, desc, scope string) string {
	var params []string
	if code != "" {
		params = append(params, `error="`+code+`"`, `error_description="`+quotable(desc)+`"`)
	}
	if scope != "" {
		params = append(params, `scope="`+scope+`"`)
	}
	if s.metadata != nil {
		params = append(params, `resource_metadata="`+s.metadata("/"+tool)+`"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quotable keeps a challenge's description within RFC 6750's characters
// for it: printable ASCII but the double quote and backslash.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r > 0x7e {
			return '\''
		}
		return r
	}, s)
}

// BoundTo is authed for a protected resource of its own (the MCP server):
// only a token whose RFC 8707 audience names resource reaches it (a token
// requested without resource, or bound to the tool APIs, 401
// invalid_token), the caller's live standing in the token's workspace is
// checked on every request, and every 401 points to the resource's
// metadata at metadataPath (RFC 9728 §5.1). The tool and scope rules of
// each operation are h's.
func (s *Server) BoundTo(resource, metadataPath string, h AuthedFunc) http.Handler {
	resource = strings.TrimRight(resource, "/")
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err == nil {
			verified(r, p)
		}
		if err == nil && p.Pending {
			return gatehouse.ErrSecondFactor
		}
		if err == nil && !slices.ContainsFunc(p.Resources, func(res string) bool { return strings.TrimRight(res, "/") == resource }) {
			err = errNotBound
		}
		if err == nil {
			err = s.auth.ToolAccess(r.Context(), p)
		}
		if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
			w.Header().Set("WWW-Authenticate", s.boundChallenge(r, metadataPath, err))
		}
		if err != nil {
			return err
		}
		return h(w, r, p)
	})
}

// errNotBound refuses, at a resource that takes only tokens bound to it,
// a token requested without that resource.
var errNotBound = gatehouse.Errorf(gatehouse.KindUnauthorized, "this access token was not issued for this resource; request one with its resource indicator")

// boundChallenge is the WWW-Authenticate of BoundTo's 401.
func (s *Server) boundChallenge(r *http.Request, metadataPath string, err error) string {
	var params []string
	if r.Header.Get("Authorization") != "" {
		msg := "invalid access token"
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Message != "" {
			msg = e.Message
		}
		params = append(params, `error="invalid_token"`, `error_description="`+quotable(msg)+`"`)
	}
	if s.metadata != nil {
		params = append(params, `resource_metadata="`+s.metadata(metadataPath)+`"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}
