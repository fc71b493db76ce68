package mcp

import "time"

// SetFastCalls turns the fast path of stateless tools/call on or off and
// reports whether it was on.
func SetFastCalls(on bool) bool { return fastCalls.Swap(on) }

// FastAnswered is how many tools/call the fast path has answered.
func FastAnswered() int64 { return fastAnswered.Load() }

// SetNow puts s on the clock now (the enabled tools' cache, a session's
// idle time, a listen's token expiry).
func SetNow(s *Server, now func() time.Time) { s.now = now }

// Established reports whether the session id is established (open, for
// the fast path).
func Established(s *Server, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id] != nil
}
