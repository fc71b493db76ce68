package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
)

// Each MCP session has an SDK server of its own, built once when the
// session starts, whose tools are those its caller may call: of the
// tools its token lists, those still enabled in the workspace (read
// live), that the token's scopes allow. While the session lasts, a
// watcher reads the workspace's enabled tools every watchEvery and adds
// or removes tools on the session's server as they are turned on or off,
// so the SDK sends notifications/tools/list_changed on the session's
// stream. A tools/list syncs first with the request's token (a refreshed
// or stepped-up token may allow more).

// watchEvery is how often an open session's tool set is read again.
const watchEvery = 2 * time.Second

// session is one MCP session's server and the tools it shows.
type session struct {
	s   *Server
	srv *sdk.Server
	mu  sync.Mutex
	p   *gatehouse.Principal // the latest verified caller
	// shown are the names of the tools on srv.
	shown map[string]bool
	// Set once the session is established (start), for the fast path
	// (sessioncall.go) and the idle bound: the SDK's session, its id, its
	// owner (ownerKey of whoever initialized it), the POSTs in flight and
	// when the last one ended.
	ss    *sdk.ServerSession
	id    string
	owner string
	refs  int
	last  time.Time
	// A subscriptions/listen's: when its token expires (zero: never) and
	// how its stream is ended.
	expires time.Time
	stop    func()
}

// newSessionKey carries, in a request's context, the server built for
// the session that request starts: the SDK asks for it more than once.
type newSessionKey struct{}

type newSession struct{ srv *sdk.Server }

// serverFor is the StreamableHTTPHandler's getServer: for an initialize
// without a session id (a new session), a server of its own for the
// caller, built once per request; for any other request, the base server,
// of which the SDK reads only its protocol versions (a session's own
// server answers its messages; a message without a session that is not an
// initialize is refused by the SDK, which ends that session). Nil once
// the server is closed (no new sessions).
func (s *Server) serverFor(r *http.Request) *sdk.Server {
	ns, _ := r.Context().Value(newSessionKey{}).(*newSession)
	p, _ := r.Context().Value(principalKey{}).(*gatehouse.Principal)
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || ns == nil || p == nil {
		return s.base
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil
	}
	if ns.srv == nil {
		ns.srv = s.newSessionServer(r.Context(), p)
	}
	return ns.srv
}

// newSDKServer is an SDK server with Gatehouse's name and capabilities,
// notifications/tools/list_changed among them (on a session's stream, or
// in revision 2026-07-28 on a subscriptions/listen stream). A stateless
// one's lists say they are fresh for modernTTL and the caller's alone, so
// a client that does not listen lists again to see a tool turned off.
func newSDKServer(stateless bool) *sdk.Server {
	opts := &sdk.ServerOptions{
		Instructions: "Gatehouse's tools (Tasks, Links, Forms, Sign) in the workspace your token was issued for.",
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Resources: &sdk.ResourceCapabilities{}},
	}
	if stateless {
		opts.SetCacheable = func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
			c.TTLMs, c.CacheScope = int(modernTTL/time.Millisecond), "private"
		}
	}
	return sdk.NewServer(&sdk.Implementation{Name: "gatehouse", Title: "Gatehouse", Version: "1"}, opts)
}

// newSessionServer builds the server of a session p starts, with the
// tools p may call.
func (s *Server) newSessionServer(ctx context.Context, p *gatehouse.Principal) *sdk.Server {
	ses := &session{s: s, srv: newSDKServer(false), p: p, shown: map[string]bool{}}
	ses.sync(ctx, nil)
	ses.srv.AddReceivingMiddleware(ses.track, ses.start, ses.list, ses.hidden, s.resources)
	return ses.srv
}

// sync sets the session's tools to those its caller may call now (p, when
// not nil, is the caller of the request being answered). Adding or
// removing tools makes the SDK notify the session.
func (ses *session) sync(ctx context.Context, p *gatehouse.Principal) {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if p != nil {
		ses.p = p
	}
	live, err := ses.s.enabled(ctx, ses.p.OrgID)
	if err != nil {
		ses.s.log.WarnContext(ctx, "mcp: read the workspace's enabled tools", "err", err)
		return // keep the tools shown; calls are checked again
	}
	var gone []string
	for _, t := range ses.s.order {
		want := t.refusal(ses.p, live) == nil
		switch {
		case want && !ses.shown[t.name]:
			ses.srv.AddTool(ses.s.sdkTools[t.name], ses.s.callHandler(t))
			ses.shown[t.name] = true
		case !want && ses.shown[t.name]:
			gone = append(gone, t.name)
			delete(ses.shown, t.name)
		}
	}
	if len(gone) > 0 {
		ses.srv.RemoveTools(gone...)
	}
}

// shows reports whether the session's server has the tool name.
func (ses *session) shows(name string) bool {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	return ses.shown[name]
}

// track keeps the latest verified caller of the session, whom the
// watcher checks the tools against.
func (ses *session) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if p := principalOf(req.GetExtra()); p != nil {
			ses.mu.Lock()
			ses.p = p
			ses.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// list syncs the session's tools with the caller of a tools/list before
// the SDK lists them.
func (ses *session) list(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" {
			ses.sync(ctx, principalOf(req.GetExtra()))
		}
		return next(ctx, method, req)
	}
}

// hidden answers a tools/call of a Gatehouse tool the session does not
// show with the tool's own handler, whose refusal is the API's text (the
// tool not enabled, the scope not allowing it), rather than the SDK's
// "unknown tool".
func (ses *session) hidden(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if t := ses.s.tools[call.Params.Name]; t != nil && !ses.shows(t.name) {
			return ses.s.callHandler(t)(ctx, call)
		}
		return next(ctx, method, req)
	}
}

// start counts a session open from its initialize until it ends (DELETE,
// idle timeout, Close), keeps it for Close, and watches the workspace's
// enabled tools while it lasts.
func (ses *session) start(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil {
			return res, err
		}
		ss, ok := req.GetSession().(*sdk.ServerSession)
		p := principalOf(req.GetExtra())
		if !ok || p == nil {
			return res, err
		}
		s := ses.s
		k := ownerKey(p)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			go ss.Close()
			return res, err
		}
		s.open[k]++
		s.sessions[ss] = struct{}{}
		ses.mu.Lock()
		ses.ss, ses.id, ses.owner, ses.last = ss, ss.ID(), k, s.now()
		ses.mu.Unlock()
		s.byID[ses.id] = ses
		s.mu.Unlock()
		done := make(chan struct{})
		go func() {
			ss.Wait()
			s.mu.Lock()
			if s.open[k]--; s.open[k] <= 0 {
				delete(s.open, k)
			}
			delete(s.sessions, ss)
			s.mu.Unlock()
			s.forget(ses)
			close(done)
		}()
		go ses.watch(done)
		return res, err
	}
}

// watch syncs the session's tools every watchEvery until done, and ends
// an established session idle for sessionIdle and a listen whose token
// has expired.
func (ses *session) watch(done <-chan struct{}) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if ses.idle() {
				ses.s.end(ses)
				return
			}
			if ses.stop != nil && !ses.expires.IsZero() && !ses.s.now().Before(ses.expires) {
				ses.stop()
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), watchEvery)
			ses.sync(ctx, nil)
			cancel()
		}
	}
}

// The idle bound: a session is ended once no POST of it has run for
// sessionIdle, as the SDK's SessionTimeout did (its GET stream does not
// count). It is kept here, not by the SDK, because the fast path answers
// POSTs the SDK never sees.

// begin and finish bracket a POST of the session.
func (ses *session) begin() {
	ses.mu.Lock()
	ses.refs++
	ses.mu.Unlock()
}

func (ses *session) finish() {
	ses.mu.Lock()
	if ses.refs--; ses.refs == 0 {
		ses.last = ses.s.now()
	}
	ses.mu.Unlock()
}

// idle reports whether the established session has had no POST in
// flight for sessionIdle.
func (ses *session) idle() bool {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	return ses.ss != nil && ses.refs == 0 && ses.s.now().Sub(ses.last) >= sessionIdle
}

// established is the session of id when its owner is p's subject in
// p's workspace, as the SDK would serve it; nil for any other (the SDK
// answers: 404 for an unknown or ended session, 403 for another owner).
func (s *Server) established(id string, p *gatehouse.Principal) *session {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	ses := s.byID[id]
	s.mu.Unlock()
	if ses == nil || ses.owner != ownerKey(p) {
		return nil
	}
	return ses
}

// forget takes the session from the fast path before it ends, so no
// request of it is answered after the SDK would refuse them.
func (s *Server) forget(ses *session) {
	s.mu.Lock()
	if s.byID[ses.id] == ses {
		delete(s.byID, ses.id)
	}
	s.mu.Unlock()
}

// end ends the session (idle).
func (s *Server) end(ses *session) {
	s.forget(ses)
	ses.ss.Close()
}

// enabled lists the tools enabled in org now (Config.EnabledTools), kept
// for cache.TTL per org as the kernel keeps a token's standing; nil
// without Config.EnabledTools (the token's list is trusted).
func (s *Server) enabled(ctx context.Context, org string) ([]string, error) {
	if s.cfg.EnabledTools == nil {
		return nil, nil
	}
	now := s.now()
	if v, ok := s.live.Get(org, now); ok {
		return v, nil
	}
	v, err := s.cfg.EnabledTools(ctx, org)
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = []string{}
	}
	s.live.Put(org, v, now)
	return v, nil
}

// Close ends every open MCP session and subscriptions/listen stream, so
// their streams end at once
// (before the HTTP server's Shutdown, which would wait for them), and
// refuses new ones. It is safe on a nil Server.
func (s *Server) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	clear(s.byID)
	open := make([]*sdk.ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		open = append(open, ss)
	}
	for l := range s.listens {
		l.cancel()
	}
	s.mu.Unlock()
	for _, ss := range open {
		ss.Close()
	}
}
