package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// stream is an open subscriptions/listen request (revision 2026-07-28)
// read as a raw client does: each message of its Server-Sent Events.
type stream struct {
	msgs   chan map[string]any
	cancel context.CancelFunc
	done   chan struct{} // closed when the response body ends
}

const listenBody = `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`

// listenRaw opens a subscriptions/listen stream with tok over HTTP and
// checks its first message is the acknowledgement (toolsListChanged
// honoured, resourcesListChanged not: no resource list changes are sent).
func listenRaw(t testing.TB, env *testenv.Env, tok string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", env.URL+"/mcp", strings.NewReader(listenBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := env.Client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("subscriptions/listen: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &stream{msgs: make(chan map[string]any, 16), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) == nil {
				s.msgs <- m
			}
		}
	}()
	t.Cleanup(func() { s.close() })
	ack := s.next(t, "the acknowledgement")
	notes, _ := ack["params"].(map[string]any)["notifications"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || notes["toolsListChanged"] != true || notes["resourcesListChanged"] != nil ||
		subscription(ack) != 7.0 {
		t.Fatalf("first message on the listen stream: %v", ack)
	}
	return s
}

// close ends the stream as a client does: it closes the request.
func (s *stream) close() {
	s.cancel()
	<-s.done
}

// next is the stream's next message.
func (s *stream) next(t testing.TB, what string) map[string]any {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-s.done:
		t.Fatalf("the listen stream ended waiting for %s", what)
	case <-time.After(20 * time.Second):
		t.Fatalf("nothing on the listen stream waiting for %s", what)
	}
	return nil
}

// subscription is the subscription id in a message's _meta.
func subscription(m map[string]any) any {
	meta, _ := m["params"].(map[string]any)["_meta"].(map[string]any)
	return meta["io.modelcontextprotocol/subscriptionId"]
}

// listenGoroutines counts the goroutines serving listen streams: the
// watchers of the listens' servers and the SDK's listen handlers.
func listenGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "created by github.com/gatehouse/gatehouse/internal/mcp.(*Server).listen") ||
			strings.Contains(g, "go-sdk/mcp.(*Server).subscriptionsListen") {
			n++
		}
	}
	return n
}

// TestMCPListenToolListChanged: a client of revision 2026-07-28 learns of
// a tool turned off through subscriptions/listen. The server advertises
// listChanged; a raw listen stream is acknowledged first, then gets one
// notifications/tools/list_changed carrying its subscription id when the
// workspace turns Tasks off, and the Go SDK's client (which listens on
// its own when it has a handler) is notified too and lists the tools
// without Tasks. A stream of another workspace gets nothing from it, and
// once the streams close no goroutine of theirs is left.
func TestMCPListenToolListChanged(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		before := listenGoroutines()
		a, org := env.Team(t)
		b, orgB := env.Team(t)
		ta, tb := bound(t, env, a.Token, "", nil, env.URL+"/mcp"), bound(t, env, b.Token, "", nil, env.URL+"/mcp")

		changed := make(chan struct{}, 16)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := sdk.NewClient(&sdk.Implementation{Name: "gatehouse-test", Version: "1"}, &sdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: ta}}},
			&sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
			t.Fatalf("2026-07-28 capabilities: %+v", caps)
		}
		if n := len(toolNames(t, cs)); n != 19 {
			t.Fatalf("tools before: %d", n)
		}
		sa, sb := listenRaw(t, env, ta), listenRaw(t, env, tb)

		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		if m := sa.next(t, "tasks turned off"); m["method"] != "notifications/tools/list_changed" || subscription(m) != 7.0 {
			t.Fatalf("after tasks turned off: %v", m)
		}
		notified(t, changed, "tasks turned off (Go SDK client)")
		if names := toolNames(t, cs); len(names) != 12 || len(withPrefix(names, "tasks_")) != 0 {
			t.Fatalf("tools after tasks turned off: %v", names)
		}
		// The other workspace's stream hears only of its own change: its
		// first message after the acknowledgement is that, and the first
		// stream heard of its change once.
		env.Do(t, "PUT", "/v1/orgs/"+orgB+"/tools", b.Token, map[string]any{"tool": "links", "enabled": false}).Want(t, 200)
		if m := sb.next(t, "links turned off in the other workspace"); m["method"] != "notifications/tools/list_changed" {
			t.Fatalf("other workspace's stream: %v", m)
		}
		select {
		case m := <-sb.msgs:
			t.Fatalf("other workspace's stream, a second message: %v", m)
		case m := <-sa.msgs:
			t.Fatalf("a second message after one change: %v", m)
		default:
		}

		cs.Close()
		sa.close()
		sb.close()
		for deadline := time.Now().Add(20 * time.Second); listenGoroutines() > before; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d goroutines of listen streams left after they closed (%d before)", listenGoroutines(), before)
			}
		}
	})
}

// TestMCPListenCap: a listen stream counts as one of the account's
// mcp.MaxSessions in a workspace, with the sessions of the earlier
// revisions: past them a listen is 429, and closing one frees its place.
func TestMCPListenCap(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		rpc(t, env, tok, "", "", initialize).Want(t, 200) // a session of 2025-06-18
		var first *stream
		for i := range mcp.MaxSessions - 1 {
			s := listenRaw(t, env, tok)
			if i == 0 {
				first = s
			}
		}
		// Read as a stream: a listen let through would not end.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", env.URL+"/mcp", strings.NewReader(listenBody))
		req.Header = http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"subscriptions/listen"},
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer " + tok}}
		res, err := env.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 300)
		n, _ := io.ReadFull(res.Body, body)
		res.Body.Close()
		if res.StatusCode != 429 || !strings.Contains(string(body[:n]), "too many open MCP sessions") {
			t.Fatalf("listen past the cap: %d %s", res.StatusCode, body[:n])
		}
		rpc(t, env, tok, "", "", initialize).Want(t, 429)
		first.close()
		deadline := time.Now().Add(5 * time.Second)
		for rpc(t, env, tok, "", "", initialize).Status != 200 {
			if time.Now().After(deadline) {
				t.Fatal("a listen's end did not free its place")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestMCPListenEnds: a subscriptions/listen stream ends when its token
// expires by the server's clock, and when the server closes (a graceful
// shutdown), leaving no goroutine of its own; once closed, the server
// opens no new stream.
func TestMCPListenEnds(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		mcp.SetNow(env.MCP, env.Clock.Now)
		before := listenGoroutines()
		a, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp") // an hour from the clock's now

		s := listenRaw(t, env, tok)
		env.Clock.Advance(59 * time.Minute)
		select {
		case <-s.done:
			t.Fatal("the listen stream ended before its token expired")
		case <-time.After(2500 * time.Millisecond): // a tick of its watcher
		}
		env.Clock.Advance(time.Minute)
		ended(t, s, "its token expired")
		gone(t, before)

		// A fresh token: the clock has passed the first one's expiry.
		tok = bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		s, other := listenRaw(t, env, tok), listenRaw(t, env, tok)
		env.MCP.Close()
		ended(t, s, "the server closed")
		ended(t, other, "the server closed")
		gone(t, before)
		if r := rpcAt(t, env, tok, "2026-07-28", "subscriptions/listen", listenBody); r.Status != 400 {
			t.Fatalf("a listen after Close: %d %s", r.Status, r.Body)
		}
		gone(t, before)
	})
}

// ended waits for the listen stream to end.
func ended(t *testing.T, s *stream, why string) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the listen stream still open after %s", why)
	}
}

// gone waits until no more goroutines serve listen streams than before.
func gone(t *testing.T, before int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); listenGoroutines() > before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of listen streams left (%d before)", listenGoroutines(), before)
		}
	}
}
