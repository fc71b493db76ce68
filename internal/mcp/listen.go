package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
)

// In revision 2026-07-28 there is no session and no GET stream: a client
// that wants notifications/tools/list_changed sends subscriptions/listen,
// a request whose response is a Server-Sent Events stream that lasts
// until the client cancels it. The SDK's stateless handler serves it
// (acknowledgement, the subscription id in each notification's _meta) on
// the server getServer returns, notifying the subscriptions of that
// server when its tools change. A listen therefore gets a server of its
// own, like a session of the earlier revisions: built for its caller,
// synced by the same watcher every watchEvery while the request lasts,
// so a tool the workspace turns off (read from the database, on any
// instance) leaves it and the SDK notifies the stream. It ends with its
// request, at the token's expiry, or at Close, and counts as one of the
// caller's MaxSessions while open.

// listenKey carries, in a subscriptions/listen request's context, the
// server built for it.
type listenKey struct{}

// isListen reports whether body is one JSON-RPC request of method
// subscriptions/listen (a batch is not: the SDK serves a listen alone).
func isListen(body []byte) bool {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' || !bytes.Contains(b, []byte(`subscriptions/listen`)) {
		return false
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(b, &m) == nil && m.Method == "subscriptions/listen"
}

// listen serves a subscriptions/listen request of p through next (the
// stateless handler): a server of its own, watched until the request
// ends. It answers 429 when p's subject has MaxSessions open in its
// workspace, and the SDK's 400 once the server is closed.
func (s *Server) listen(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, next http.Handler) error {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !p.ExpiresAt.IsZero() {
		// The stream grants nothing beyond its token's lifetime: a timer
		// for the time left by the server's clock, which the watcher also
		// checks (expired).
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, p.ExpiresAt.Sub(s.now()))
		defer stop()
	}
	k := ownerKey(p)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		next.ServeHTTP(w, r) // no server: the SDK's 400
		return nil
	}
	if s.open[k] >= MaxSessions {
		s.mu.Unlock()
		return tooManySessions()
	}
	s.open[k]++
	open := &listening{cancel: cancel}
	s.listens[open] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.open[k]--; s.open[k] <= 0 {
			delete(s.open, k)
		}
		delete(s.listens, open)
		s.mu.Unlock()
	}()

	ses := &session{s: s, srv: newSDKServer(true), p: p, shown: map[string]bool{}, expires: p.ExpiresAt, stop: cancel}
	ses.sync(ctx, nil)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ses.watch(ctx.Done())
	}()
	// The stream outlives the server's write timeout (a minute), as the
	// GET stream of a session does.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(sessionIdle))
	next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, listenKey{}, ses.srv)))
	cancel()
	<-watched
	return nil
}

// listening is an open subscriptions/listen stream, ended by Close.
type listening struct{ cancel context.CancelFunc }

// listenServer is the server built for a subscriptions/listen request
// (nil for any other).
func listenServer(r *http.Request) *sdk.Server {
	srv, _ := r.Context().Value(listenKey{}).(*sdk.Server)
	return srv
}
