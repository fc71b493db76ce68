package mcp

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
)

// A tools/call inside a session (the 2025 revisions) went through the
// SDK's whole transport: its session lookup, three decodes of the
// message (each taking a 32 KiB buffer), a jsonrpc2 round trip through a
// goroutine and its encoding, about four times the allocations of the
// tool. sessionCall answers it itself when the SDK's checks are ones it
// can make exactly: the session is established here (its initialize
// succeeded and it has not ended), its owner is the request's subject in
// the request's workspace (else the SDK's 403: a session id alone grants
// nothing), the request's revision is one a session speaks, and the
// message is one well-formed tools/call of a Gatehouse tool without
// _meta (fastMessage). The tool is called through the same handler as
// the SDK's path, and the answer is the SDK's bytes;
// TestMCPSessionFastCallSameAnswers sends the same calls both ways.
// Anything else goes to the SDK.
//
// One difference is deliberate: the SDK refuses a call whose id is in
// flight in the session (it routes answers by id); the fast path answers
// each request on its own response and so answers both.

// sessionCall answers r (a POST with body, of caller p, naming session
// ses, established and p's) when it is a tools/call the fast path can
// answer; false leaves it to the SDK.
func (s *Server) sessionCall(w http.ResponseWriter, r *http.Request, body []byte, p *gatehouse.Principal, ses *session) bool {
	switch r.Header.Get("Mcp-Protocol-Version") {
	case "", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
	default:
		return false // another revision: the SDK's answer
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	m, t := s.fastMessage(r, body)
	if m == nil || len(m.Params.Meta) > 0 || s.isClosed() {
		return false
	}
	// As the session's middleware (track): the watcher checks the tools
	// against the latest caller.
	ses.mu.Lock()
	ses.p = p
	ses.mu.Unlock()
	writeResult(w, m.ID, s.fastRun(r.Context(), t, m, p), false, ses.shows(t.name))
	fastAnswered.Add(1)
	return true
}
