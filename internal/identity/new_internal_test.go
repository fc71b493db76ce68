package identity

import "testing"

// TestNewDefaults: a Service built from a Config that leaves the clock,
// logger and hasher unset (as the binary may) has its own.
func TestNewDefaults(t *testing.T) {
	s := New(Config{})
	if s.now == nil || s.log == nil || s.hasher == nil {
		t.Fatalf("New(Config{}) left a dependency nil: now %v, log %v, hasher %v", s.now != nil, s.log != nil, s.hasher != nil)
	}
	if s.Now().IsZero() {
		t.Error("the default clock reads the zero time")
	}
}
