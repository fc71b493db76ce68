package mcp

// SetFastCalls turns the fast path of stateless tools/call on or off and
// reports whether it was on.
func SetFastCalls(on bool) bool { return fastCalls.Swap(on) }

// FastAnswered is how many tools/call the fast path has answered.
func FastAnswered() int64 { return fastAnswered.Load() }
