package mcp

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
)

// The server is dual-era (MCP 2026-07-28, "Versioning and
// Compatibility"): a client of a 2025 revision (or 2024-11-05) opens a
// session with initialize and is served by the stateful handler
// (sessions.go); a request of revision 2026-07-28 or later (its
// MCP-Protocol-Version header) carries its version in each request and
// has no session, and is served by the SDK's stateless handler. The SDK
// handles one era per handler, so serve picks the handler by the header.
// A stateless request is answered by a server holding the tools its
// caller may call; such a server depends only on the token's tools and
// scope and the workspace's enabled tools, so it is kept, per that key,
// for modernTTL among at most modernMax.

// modernVersion is the first revision without sessions.
const modernVersion = "2026-07-28"

const (
	modernTTL = 2 * time.Second
	modernMax = 256
)

// modernServers keeps the stateless requests' servers.
type modernServers struct {
	mu sync.Mutex
	m  map[string]modernServer
}

type modernServer struct {
	srv *sdk.Server
	at  time.Time
}

// modern reports whether r is of the stateless era: an
// MCP-Protocol-Version of 2026-07-28 or later (dates compare as text),
// outside a session of an earlier one.
func modern(r *http.Request) bool {
	return r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= modernVersion
}

// statelessServerFor is the stateless handler's getServer: the server of
// the tools the request's caller may call now (for a subscriptions/listen,
// the one built for it). Nil once the server is closed.
func (s *Server) statelessServerFor(r *http.Request) *sdk.Server {
	if srv := listenServer(r); srv != nil {
		return srv
	}
	p, _ := r.Context().Value(principalKey{}).(*gatehouse.Principal)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed || p == nil {
		return nil
	}
	ctx := r.Context()
	live, err := s.enabled(ctx, p.OrgID)
	if err != nil {
		// Not kept: the server shows none of the tools; a call is checked
		// again (and refused with the cause) by the tool's handler.
		s.log.WarnContext(ctx, "mcp: read the workspace's enabled tools", "err", err)
		return s.newModernServer(ctx, p)
	}
	// NUL is in no tool name nor scope word (RFC 6749 §3.3).
	k := strings.Join(p.Tools, " ") + "\x00" + p.Scope + "\x00" + strings.Join(live, " ")
	now := s.now()
	s.modern.mu.Lock()
	e, ok := s.modern.m[k]
	s.modern.mu.Unlock()
	if ok && now.Sub(e.at) < modernTTL && !now.Before(e.at) {
		return e.srv
	}
	srv := s.newModernServer(ctx, p)
	s.modern.mu.Lock()
	if s.modern.m == nil || len(s.modern.m) >= modernMax {
		s.modern.m = map[string]modernServer{}
	}
	s.modern.m[k] = modernServer{srv: srv, at: now}
	s.modern.mu.Unlock()
	return srv
}

// newModernServer builds a stateless server with the tools p may call.
// It keeps no caller: each request's is its own (principalOf).
func (s *Server) newModernServer(ctx context.Context, p *gatehouse.Principal) *sdk.Server {
	ses := &session{s: s, srv: newSDKServer(true), p: p, shown: map[string]bool{}}
	ses.sync(ctx, nil)
	ses.srv.AddReceivingMiddleware(ses.hidden, s.resources)
	return ses.srv
}
