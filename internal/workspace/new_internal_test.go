package workspace

import "testing"

// TestNewDefaults: a Service built from a Config that leaves the clock,
// logger and resolver unset (as the binary may) has its own.
func TestNewDefaults(t *testing.T) {
	s := New(Config{})
	if s.now == nil || s.log == nil || s.resolver == nil {
		t.Fatalf("New(Config{}) left a dependency nil: now %v, log %v, resolver %v", s.now != nil, s.log != nil, s.resolver != nil)
	}
	if s.Now().IsZero() {
		t.Error("the default clock reads the zero time")
	}
}
