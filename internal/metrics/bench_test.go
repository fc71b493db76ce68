package metrics

import (
	"testing"
	"time"
)

// BenchmarkRequest is what the metrics listener adds to each answered
// request: a counter and a histogram by route, method and status
// (BENCHMARKS.md sets it against a request's whole server CPU).
func BenchmarkRequest(b *testing.B) {
	m := New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request("GET /v1/auth/verify", "GET", 200, 150*time.Microsecond)
		}
	})
}
