package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	for _, set := range []map[string]string{{"GOGC": "100"}, {"GOGC": "off"}, {"GOMEMLIMIT": "256MiB"}} {
		if tuneGC(env(set)) {
			t.Errorf("tuneGC with %v changed the collector; the operator's choice must stand", set)
		}
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("with %v: GC percent %d, want 100", set, got)
		}
	}
	if !tuneGC(env(nil)) {
		t.Fatal("tuneGC with neither GOGC nor GOMEMLIMIT set left the default")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
}
