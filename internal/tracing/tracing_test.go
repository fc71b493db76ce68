package tracing_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/internal/tracing"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestRequestSpan: a request's span is named by its route pattern, never
// its path; it continues the caller's traceparent only from a trusted
// peer (anyone else would choose trace ids and force sampling); a 5xx
// marks it failed.
func TestRequestSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracing.NewWith(exp, tracing.Config{Service: "gatehouse"})
	for _, trusted := range []bool{false, true} {
		exp.Reset()
		r := httptest.NewRequest("GET", "/v1/orgs/0b5e5c1e-secret-id/members", nil)
		r.Header.Set("Traceparent", parent)
		_, end := tr.Request(r, trusted)
		end("GET /v1/orgs/{id}/members", 503)
		spans := exp.GetSpans()
		if len(spans) != 1 {
			t.Fatalf("%d spans; want 1", len(spans))
		}
		s := spans[0]
		if s.Name != "GET /v1/orgs/{id}/members" || strings.Contains(s.Name, "secret") {
			t.Errorf("span name %q; want the route pattern", s.Name)
		}
		adopted := s.Parent.TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736"
		if adopted != trusted {
			t.Errorf("trusted peer %v: traceparent adopted %v", trusted, adopted)
		}
		if s.Status.Code.String() != "Error" {
			t.Errorf("status of a 503 span = %v; want Error", s.Status.Code)
		}
	}
}

// TestLogHandlerAddsTraceID: a line logged with a span's context carries
// its trace and span ids; one without a span carries none.
func TestLogHandlerAddsTraceID(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracing.NewWith(exp, tracing.Config{Service: "gatehouse"})
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v")
	ctx, end := tr.Job(context.Background(), "mail", 1)
	log.InfoContext(ctx, "in a span")
	end("completed", nil)
	log.Info("outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	id := exp.GetSpans()[0].SpanContext.TraceID().String()
	if len(lines) != 2 || !strings.Contains(lines[0], `"trace_id":"`+id+`"`) || !strings.Contains(lines[0], `"span_id":"`) {
		t.Errorf("line in a span: %s; want trace_id %s", lines[0], id)
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("line outside a span has a trace id: %s", lines[1])
	}
}

// receiver is an in-process OTLP/HTTP receiver.
type receiver struct {
	mu    sync.Mutex
	got   []*collector.ExportTraceServiceRequest
	paths []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collector.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	rc.got, rc.paths = append(rc.got, &req), append(rc.paths, r.URL.Path)
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Write(b)
}

// spans returns the names of the spans received.
func (rc *receiver) spans() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var names []string
	for _, req := range rc.got {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
	}
	return names
}

// TestDefaultSampling: unless OTEL_TRACES_SAMPLER is set, New records one
// trace in twenty (the 3% cost line of issue 29; BENCHMARKS.md), decided at
// the root; a trusted caller's decision is followed, and the statements
// of a request not sampled start no span at all.
func TestDefaultSampling(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Endpoint: srv.URL, Service: "gatehouse"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for range n {
		_, end := tr.Query(ctx, "sqlite", "SELECT 1")
		end(nil)
	}
	// A request left out starts nothing, and its log lines name no trace.
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil)))
	const requests = 200
	for range requests {
		rctx, end := tr.Request(httptest.NewRequest("GET", "/health", nil), false)
		log.InfoContext(rctx, "in a request")
		end("GET /health", 200)
	}
	if named := strings.Count(buf.String(), `"trace_id"`); named < 1 || named > 30 {
		t.Errorf("%d of %d requests' log lines name a trace; want about one in twenty", named, requests)
	}
	for _, flags := range []string{"00", "01"} {
		r := httptest.NewRequest("GET", "/v1/auth/verify", nil)
		r.Header.Set("Traceparent", parent[:len(parent)-2]+flags)
		rctx, end := tr.Request(r, true)
		_, endQuery := tr.Query(rctx, "sqlite", "UPDATE sessions SET x = $1")
		endQuery(nil)
		end("GET /v1/auth/verify", 200)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, name := range rc.spans() {
		counts[name]++
	}
	// Binomial(2000, 0.05): mean 100, standard deviation 9.7.
	if c := counts["SELECT"]; c < 50 || c > 150 {
		t.Errorf("%d of %d root spans exported; want about one in twenty", c, n)
	}
	if c := counts["GET /health"]; c < 1 || c > 30 {
		t.Errorf("%d of %d requests exported; want about one in twenty", c, requests)
	}
	if counts["GET /v1/auth/verify"] != 1 || counts["UPDATE"] != 1 {
		t.Errorf("spans of the sampled and the unsampled caller: %v; want the sampled one's request and statement only", counts)
	}
}

// TestOTLPExport: New exports over OTLP/HTTP (protobuf POSTed to the
// endpoint's /v1/traces), here to an in-process receiver; Shutdown
// flushes the batch.
func TestOTLPExport(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Endpoint: srv.URL + "/", Service: "gatehouse", Version: "test", EnvSampler: true})
	if err != nil {
		t.Fatal(err)
	}
	_, end := tr.Query(ctx, "postgres", "SELECT tat FROM rate_limits WHERE key = $1")
	end(errors.New("boom"))
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 1 || rc.paths[0] != "/v1/traces" {
		t.Fatalf("receiver got %d exports at %v; want 1 at /v1/traces", len(rc.got), rc.paths)
	}
	rs := rc.got[0].ResourceSpans[0]
	span := rs.ScopeSpans[0].Spans[0]
	service := ""
	for _, a := range rs.Resource.Attributes {
		if a.Key == "service.name" {
			service = a.Value.GetStringValue()
		}
	}
	if service != "gatehouse" || span.Name != "SELECT" || span.Status.GetMessage() != "boom" {
		t.Errorf("exported service %q, span %q, status %q; want gatehouse, SELECT, boom", service, span.Name, span.Status.GetMessage())
	}
}
