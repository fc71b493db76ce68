package tracing

import (
	"context"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discard is an exporter that drops every batch.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// samplers are the two ways traces run: every request recorded, and the
// default (one trace in twenty).
var samplers = []struct {
	name  string
	ratio float64
}{{"always", 0}, {"default", DefaultRatio}}

// BenchmarkRequestSpan is what tracing adds to a request that touches no
// database (verify): its server span, batched as in production.
// BenchmarkQuerySpan is each statement's client span (refresh has a few)
// within a request's.
func BenchmarkRequestSpan(b *testing.B) {
	for _, sm := range samplers {
		b.Run(sm.name, func(b *testing.B) {
			t := newTracer(Config{Service: "gatehouse"}, sdktrace.WithBatcher(discard{}))
			t.ratio = sm.ratio
			defer t.Shutdown(context.Background())
			r := httptest.NewRequest("GET", "/v1/auth/verify", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, end := t.Request(r, false)
					end("GET /v1/auth/verify", 200)
				}
			})
		})
	}
}

func BenchmarkQuerySpan(b *testing.B) {
	for _, sm := range samplers {
		b.Run(sm.name, func(b *testing.B) {
			t := newTracer(Config{Service: "gatehouse"}, sdktrace.WithBatcher(discard{}))
			t.ratio = sm.ratio
			defer t.Shutdown(context.Background())
			r := httptest.NewRequest("POST", "/v1/auth/refresh", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, endRequest := t.Request(r, false)
					for range 4 {
						_, end := t.Query(ctx, "sqlite", "UPDATE sessions SET refresh_hash = $1 WHERE id = $2")
						end(nil)
					}
					endRequest("POST /v1/auth/refresh", 200)
				}
			})
		})
	}
}
