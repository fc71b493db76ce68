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

// TestOTLPExport: New exports over OTLP/HTTP (protobuf POSTed to the
// endpoint's /v1/traces), here to an in-process receiver; Shutdown
// flushes the batch.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var got []*collector.ExportTraceServiceRequest
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collector.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		got, paths = append(got, &req), append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	defer srv.Close()
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Endpoint: srv.URL + "/", Service: "gatehouse", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, end := tr.Query(ctx, "postgres", "SELECT tat FROM rate_limits WHERE key = $1")
	end(errors.New("boom"))
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || paths[0] != "/v1/traces" {
		t.Fatalf("receiver got %d exports at %v; want 1 at /v1/traces", len(got), paths)
	}
	rs := got[0].ResourceSpans[0]
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
