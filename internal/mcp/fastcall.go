package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/gatehouse/gatehouse"
)

// A tools/call of revision 2026-07-28 has no session, so the SDK's
// stateless handler builds a session for it, decodes the message several
// times (each decode taking a 32 KiB buffer) and encodes the result, about
// ten times the allocations of the tool itself. fastCall answers the
// common case itself with one decode: a single, well-formed tools/call of
// a Gatehouse tool whose headers and _meta the SDK would accept, called
// through the same handler (callHandler: the enabled-tool, scope and
// domain rules) and answered in the SDK's shape. Anything it is not sure
// the SDK would accept goes to the SDK, which answers it (and its errors)
// as before. TestMCPFastCallSameAnswers sends the same calls both ways.

// fastCalls turns the fast path on (tests turn it off to compare);
// fastAnswered counts the calls it answered.
var (
	fastCalls    atomic.Bool
	fastAnswered atomic.Int64
)

func init() { fastCalls.Store(true) }

// fastCallMsg is the one decode of a tools/call message.
type fastCallMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		// Fields of multi-round-trip calls, which the fast path leaves to
		// the SDK.
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	} `json:"params"`
}

// serverInfo is the _meta every result of revision 2026-07-28 carries.
var serverInfo = &sdk.Implementation{Name: "gatehouse", Title: "Gatehouse", Version: "1"}

// fastCall answers r (a stateless POST with body, of caller p) when it is
// a tools/call the fast path can answer; false leaves it to the SDK.
func (s *Server) fastCall(w http.ResponseWriter, r *http.Request, body []byte, p *gatehouse.Principal) bool {
	if r.Header.Get("Mcp-Protocol-Version") != modernVersion || r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	m, t := s.fastMessage(r, body)
	if m == nil || r.Header.Get("Mcp-Name") != t.name {
		return false
	}
	// The _meta the SDK requires of a request of this revision: the same
	// revision, the client's capabilities (an object), its info if any.
	var meta map[string]json.RawMessage
	if strictDecode(m.Params.Meta, &meta) != nil {
		return false
	}
	var version string
	if strictDecode(meta["io.modelcontextprotocol/protocolVersion"], &version) != nil || version != modernVersion {
		return false
	}
	var caps map[string]json.RawMessage
	if strictDecode(meta["io.modelcontextprotocol/clientCapabilities"], &caps) != nil || caps == nil {
		return false
	}
	if raw, ok := meta["io.modelcontextprotocol/clientInfo"]; ok {
		var info sdk.Implementation
		if strictDecode(raw, &info) != nil {
			return false
		}
	}
	if s.isClosed() {
		return false // the SDK's refusal
	}
	ctx := r.Context()
	// The SDK marks a result "complete" (resultType) only when the tool is
	// on the request's server, that is when the caller may call it; a
	// refusal comes from the hidden middleware without it.
	live, lerr := s.enabled(ctx, p.OrgID)
	shown := lerr == nil && t.refusal(p, live) == nil
	writeResult(w, m.ID, s.fastRun(ctx, t, m, p), true, shown)
	fastAnswered.Add(1)
	return true
}

// fastMessage decodes body as the SDK would read it, when it is one
// well-formed tools/call of a Gatehouse tool with a plain id sent as the
// SDK accepts it (Content-Type, Accept), and no multi-round-trip fields;
// nil when the fast path is not sure.
func (s *Server) fastMessage(r *http.Request, body []byte) (*fastCallMsg, *tool) {
	if !fastCalls.Load() || r.Method != http.MethodPost || !accepts(r.Header.Values("Accept")) {
		return nil, nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, nil
	}
	var m fastCallMsg
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' || tooDeep(b) || strictDecode(b, &m) != nil {
		return nil, nil
	}
	t := s.tools[m.Params.Name]
	if m.JSONRPC != "2.0" || m.Method != "tools/call" || t == nil || !plainID(m.ID) ||
		len(m.Params.InputResponses) > 0 || len(m.Params.RequestState) > 0 {
		return nil, nil
	}
	return &m, t
}

// fastRun calls t through its handler (callHandler: the enabled-tool,
// scope and domain rules) for caller p, as the SDK would.
func (s *Server) fastRun(ctx context.Context, t *tool, m *fastCallMsg, p *gatehouse.Principal) *sdk.CallToolResult {
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: t.name, Arguments: m.Params.Arguments},
		Extra: &sdk.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: ownerKey(p), Scopes: gatehouse.Scopes(p.Scope),
			Extra: map[string]any{principalExtra: p}}}}
	res, err := s.callHandler(t)(ctx, req)
	if err != nil || res == nil {
		// callHandler fails only without a caller, which serve always has.
		s.log.ErrorContext(ctx, "mcp: fast tools/call", "tool", t.name, "err", err)
		res = s.toolError(ctx, t, err)
	}
	return res
}

// isClosed reports whether Close has run.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// writeResult writes res as the SDK's JSON response to the request id.
// A result of revision 2026-07-28 (modern) carries the server's info in
// _meta and, complete (the tool on the server), resultType "complete";
// one in a session of an earlier revision carries neither.
func writeResult(w http.ResponseWriter, id json.RawMessage, res *sdk.CallToolResult, modern, complete bool) {
	if res.Content == nil && complete {
		res.Content = []sdk.Content{}
	}
	if modern {
		m := res.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m["io.modelcontextprotocol/serverInfo"] = serverInfo
		res.SetMeta(m)
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	// Written in pieces, not copied into one buffer (the response writer
	// buffers): the envelope, the result, and (complete) its resultType
	// last, where the SDK's CallToolResult encodes it.
	tail := "}"
	if modern && complete {
		b, tail = b[:len(b)-1], `,"resultType":"complete"}}`
		if len(b) == 1 { // {}
			tail = tail[1:]
		}
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`)
	_, _ = w.Write(id)
	_, _ = io.WriteString(w, `,"result":`)
	_, _ = w.Write(b)
	_, _ = io.WriteString(w, tail)
}

// strictDecode decodes b into v as the SDK reads messages: the same
// decoder (segmentio/encoding), field names matched exactly, and nothing
// after the value.
func strictDecode(b []byte, v any) error {
	rest, err := segjson.Parse(b, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(bytes.TrimSpace(rest)) > 0 {
		err = errors.New("data after the JSON value")
	}
	return err
}

// tooDeep reports whether b nests objects and arrays deeper than the
// SDK reads (1,000).
func tooDeep(b []byte) bool {
	depth, in, esc := 0, false, false
	for _, c := range b {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in:
			in = c != '"'
		case c == '"':
			in = true
		case c == '{' || c == '[':
			if depth++; depth > 1000 {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// plainID reports whether id is an integer or a string of plain
// characters, which the SDK writes back exactly as sent.
func plainID(id json.RawMessage) bool {
	s := string(id)
	if len(s) == 0 || len(s) > 32 || s == "null" {
		return false
	}
	if s[0] == '"' {
		if len(s) < 2 || s[len(s)-1] != '"' {
			return false
		}
		for _, c := range s[1 : len(s)-1] {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
				return false
			}
		}
		return true
	}
	if s == "0" {
		return true
	}
	digits := strings.TrimPrefix(s, "-")
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// accepts reports whether the Accept values take both application/json
// and text/event-stream, as the SDK requires (a subset of what it
// accepts: anything else goes to it).
func accepts(values []string) bool {
	var j, e bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				j = true
			case "text/event-stream":
				e = true
			}
		}
	}
	return j && e
}
