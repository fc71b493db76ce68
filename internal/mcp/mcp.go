// Package mcp is Gatehouse's MCP server for AI clients, at GATEHOUSE_MCP_URL:
// the Streamable HTTP transport of the official Go SDK, a protected
// resource of its own (RFC 9728, RFC 8707), and one MCP tool per operation
// of the tool APIs, each calling the same domain method as its HTTP
// handler, so the workspace, role, enabled-tool, scope and audit rules and
// the error texts are one code path.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/cache"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Kernel is what the server needs from the HTTP kernel (internal/web):
// BoundTo wraps h as the protected resource at resource (a valid token
// bound to it, the caller's live standing in its workspace, the 401
// challenge pointing to the metadata at metadataPath) and writes the
// error h returns in the API's error shape.
type Kernel interface {
	BoundTo(resource, metadataPath string, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
}

// Config wires a Server.
type Config struct {
	// URL is GATEHOUSE_MCP_URL: the resource tokens must be bound to, and
	// whose path the server answers at.
	URL string
	// Origins are the origins a browser page may call from (the MCP URL's
	// and the base URL's); a request with any other Origin is refused.
	Origins []string
	// MetadataPath is the suffix of the server's resource metadata
	// (oauth.MCPMetadataPath).
	MetadataPath string
	Logger       *slog.Logger
	// The tools' domains; a nil one offers none of its tools.
	Tasks *tasks.Service
	Links *links.Service
	Forms *forms.Service
	Sign  *sign.Service
	// Teams lists the caller's workspace's teams (workspace.Service.Teams).
	Teams func(ctx context.Context, p *gatehouse.Principal, orgID string) ([]workspace.Team, error)
	// EnabledTools lists the tools enabled in a workspace now
	// (workspace.Service.EnabledTools): a tool turned off is gone from the
	// open sessions' lists (notifications/tools/list_changed) and refused
	// to their calls, though their tokens still list it. Nil trusts the
	// token's list.
	EnabledTools func(ctx context.Context, orgID string) ([]string, error)
}

// Server is the MCP server: one Streamable HTTP handler whose sessions
// are bound to the token's subject and workspace, each with an SDK server
// of its own showing the tools its caller may call (sessions.go).
type Server struct {
	cfg Config
	log *slog.Logger
	// now is the wall clock of the enabled-tools cache, which with the
	// watcher's ticker bounds how long a workspace's change takes to show.
	now      func() time.Time
	tools    map[string]*tool
	order    []*tool              // every tool, in the order tools/list shows them
	sdkTools map[string]*sdk.Tool // each tool as tools/list shows it
	base     *sdk.Server          // the server the SDK asks of a request in a session (its protocol versions)
	handler  http.Handler
	// stateless answers requests of revision 2026-07-28 and later, each
	// by a server of modern (modern.go).
	stateless http.Handler
	modern    modernServers
	// limit is the per-token request rate (nil without abuse limits).
	limit *ratelimit.Limiter
	// live keeps each workspace's enabled tools for cache.TTL.
	live cache.Short[string, []string]
	mu   sync.Mutex
	// open counts the open sessions per subject and workspace.
	open map[string]int
	// sessions are the open sessions, ended by Close; closed refuses new
	// ones.
	sessions map[*sdk.ServerSession]struct{}
	// byID are the established sessions by id (sessions.go).
	byID map[string]*session
	// listens are the open subscriptions/listen streams (listen.go).
	listens map[*listening]struct{}
	closed  bool
}

// Limits: requests per token (a burst, then one per requestEvery), and the
// sessions one subject may keep open in one workspace at once.
const (
	requestBurst = 300
	requestEvery = 10 * time.Millisecond
	MaxSessions  = 32
)

// sessionIdle is how long a session without requests is kept.
const sessionIdle = 30 * time.Minute

// New builds the server; nil when cfg.URL is empty.
func New(cfg Config) *Server {
	if cfg.URL == "" {
		return nil
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: time.Now, tools: map[string]*tool{}, sdkTools: map[string]*sdk.Tool{},
		open: map[string]int{}, sessions: map[*sdk.ServerSession]struct{}{}, byID: map[string]*session{}, listens: map[*listening]struct{}{}, base: newSDKServer(false)}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, t := range s.allTools() {
		s.tools[t.name] = t
		s.order = append(s.order, t)
		s.sdkTools[t.name] = t.sdkTool()
		// As a *jsonschema.Schema, the input schema costs each session's
		// AddTool one JSON round trip fewer than as a map.
		if b, err := json.Marshal(t.in); err == nil {
			var in jsonschema.Schema
			if json.Unmarshal(b, &in) == nil {
				s.sdkTools[t.name].InputSchema = &in
			}
		}
	}
	opts := &sdk.StreamableHTTPOptions{
		Logger: s.log, MaxRequestBodyBytes: -1, // the kernel bounds bodies; sessions.go the idle time
		JSONResponse:               true, // a POST is answered in JSON; the GET stream carries notifications
		DisableLocalhostProtection: true, // Origin is checked here, and Host is the operator's
	}
	h := sdk.NewStreamableHTTPHandler(s.serverFor, opts)
	stateless := *opts
	stateless.Stateless, stateless.SessionTimeout = true, 0
	// The SDK binds each session to the TokenInfo's UserID at its start
	// and answers 403 to a request of the session with another: the
	// subject and the workspace, so a session id alone grants nothing.
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, _ := ctx.Value(principalKey{}).(*gatehouse.Principal)
		if p == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: ownerKey(p), Scopes: gatehouse.Scopes(p.Scope),
			Extra: map[string]any{principalExtra: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	s.handler = verified(h)
	s.stateless = verified(sdk.NewStreamableHTTPHandler(s.statelessServerFor, &stateless))
	return s
}

type principalKey struct{}

const principalExtra = "gatehouse.principal"

// Mount serves the MCP server at its URL's path on m: POST for messages,
// GET for the server's stream, DELETE to end a session. It mounts nothing
// without a server.
func Mount(m *http.ServeMux, k Kernel, s *Server) {
	if s == nil {
		return
	}
	path := s.Path()
	s.limit = k.Limiter("mcpRequests", requestBurst, requestEvery)
	h := k.BoundTo(s.cfg.URL, s.cfg.MetadataPath, s.serve)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		m.Handle(method+" "+path, h)
	}
}

// Path is the path the server answers at: its URL's ("/{$}" for a URL
// without one).
func (s *Server) Path() string {
	u, err := url.Parse(s.cfg.URL)
	if err != nil || u.Path == "" || u.Path == "/" {
		return "/{$}"
	}
	return u.Path
}

// serve answers one request of an authenticated caller: the Origin check,
// the scope check of the tools a POST calls (403 insufficient_scope, the
// challenge naming the scopes the call needs), then the SDK's transport.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if o := r.Header.Get("Origin"); o != "" && !slices.Contains(s.cfg.Origins, strings.TrimRight(o, "/")) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "requests from the origin %s are not allowed", quoteless(o))
	}
	if ok, wait := s.limit.Allow(tokenKey(p)); !ok {
		return &gatehouse.Error{Kind: gatehouse.KindTooMany, Message: "too many MCP requests with this token; slow down", RetryAfter: wait}
	}
	// starts: a POST that may start a session, for which a server of its
	// own is built (any other request without a session gets the base
	// server, whose session the SDK ends with the request).
	// listen: a subscriptions/listen of revision 2026-07-28, served with
	// a server of its own (listen.go).
	starts, listen, stateless, handler := false, false, modern(r), s.handler
	var ses *session // the established session r names, if p's
	if stateless {
		handler = s.stateless
	} else {
		ses = s.established(r.Header.Get("Mcp-Session-Id"), p)
	}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err // over the kernel's bound: 413
		}
		starts = !stateless && r.Header.Get("Mcp-Session-Id") == "" && bytes.Contains(body, []byte(`"initialize"`))
		listen = stateless && isListen(body)
		if starts && s.full(p) {
			return tooManySessions()
		}
		if need := s.scopesNeeded(body, p); len(need) > 0 {
			// The challenge's scope is what the client should ask for next:
			// the token's scopes and those the call needs, so stepping up
			// loses nothing (clients replace their scope with it).
			ask := gatehouse.Scopes(p.Scope + " " + strings.Join(need, " "))
			msg := "this access token's scope does not allow this call; it needs " + strings.Join(need, " ")
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(ask, " ")+
				`", error_description="`+msg+`"`)
			return gatehouse.Errorf(gatehouse.KindForbidden, "%s", msg)
		}
		if ses != nil {
			ses.begin()
			defer ses.finish()
		}
		if stateless && s.fastCall(w, r, body, p) || ses != nil && s.sessionCall(w, r, body, p, ses) {
			return nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if r.Method == http.MethodDelete && ses != nil {
		s.forget(ses) // the SDK ends it
	}
	if r.Method == http.MethodGet {
		// The server's stream outlives the server's write timeout (a
		// minute); it ends with its session, or at the idle bound.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(sessionIdle))
	}
	r.Header.Set("Authorization", "Bearer verified") // RequireBearerToken wants one; the kernel verified it
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	if listen {
		return s.listen(w, r.WithContext(ctx), p, handler)
	}
	if starts {
		ctx = context.WithValue(ctx, newSessionKey{}, &newSession{})
	}
	handler.ServeHTTP(w, r.WithContext(ctx))
	return nil
}

// tooManySessions is the 429 of a session or listen stream beyond
// MaxSessions.
func tooManySessions() error {
	return &gatehouse.Error{Kind: gatehouse.KindTooMany, RetryAfter: time.Minute,
		Message: fmt.Sprintf("too many open MCP sessions for this account in this workspace (at most %d); end one (DELETE) or let one time out", MaxSessions)}
}

// tokenKey is what the request rate is counted by: the token's grant
// session (its refreshed tokens share it), else the token.
func tokenKey(p *gatehouse.Principal) string {
	if p.SessionID != "" {
		return p.SessionID
	}
	return p.TokenID
}

// ownerKey is whose a session is: its subject in its workspace.
func ownerKey(p *gatehouse.Principal) string { return p.UserID + " " + p.OrgID }

// full reports whether p's subject has MaxSessions open in its workspace.
func (s *Server) full(p *gatehouse.Principal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[ownerKey(p)] >= MaxSessions
}

// scopesNeeded lists the scopes p lacks for the tools the JSON-RPC
// message (or batch) in body calls; none for anything else, which the
// SDK answers.
func (s *Server) scopesNeeded(body []byte, p *gatehouse.Principal) []string {
	var msgs []json.RawMessage
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &msgs) != nil {
			return nil
		}
	} else {
		msgs = []json.RawMessage{body}
	}
	var need []string
	for _, m := range msgs {
		var call struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(m, &call) != nil || call.Method != "tools/call" {
			continue
		}
		t := s.tools[call.Params.Name]
		if t == nil || gatehouse.ScopeAllows(p.Scope, t.module, t.access) {
			continue
		}
		if sc := gatehouse.ToolScope(t.module, t.access); !slices.Contains(need, sc) {
			need = append(need, sc)
		}
	}
	return need
}

// principalOf is the verified caller of an MCP request.
func principalOf(extra *sdk.RequestExtra) *gatehouse.Principal {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalExtra].(*gatehouse.Principal)
	return p
}

// quoteless keeps an echoed header printable and short.
func quoteless(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' {
			return '\''
		}
		return r
	}, s)
}
