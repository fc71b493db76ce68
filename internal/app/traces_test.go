package app_test

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tracing"
)

// TestTraces: with a tracer, a sign-in is one trace: the kernel's server
// span named by its route, the database statements and transactions as
// its children, and the sign-in's security event logged with its trace
// id; the confirmation mail's job is a span whose log line carries its
// trace id.
func TestTraces(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			env := testenv.New(t, db, testenv.Options{Tracer: tracing.NewWith(exp, tracing.Config{Service: "gatehouse"})})
			acc := env.Register(t)
			env.Login(t, acc.Email, acc.Password).Want(t, 200)
			var server tracetest.SpanStub
			for _, s := range exp.GetSpans() {
				if s.Name == "POST /v1/auth/login" {
					server = s
				}
			}
			if !server.SpanContext.IsValid() {
				t.Fatalf("no span POST /v1/auth/login among %v", names(exp.GetSpans()))
			}
			trace := server.SpanContext.TraceID()
			statements := 0
			for _, s := range exp.GetSpans() {
				if s.SpanContext.TraceID() == trace && s.Name != server.Name {
					statements++
				}
			}
			if statements == 0 {
				t.Errorf("no database span in the sign-in's trace: %v", names(exp.GetSpans()))
			}
			if !logged(env, "security event", trace.String()) {
				t.Errorf("no security event logged with trace_id=%s:\n%s", trace, env.Logs.String())
			}
			job := waitJobSpan(t, exp)
			if !logged(env, "job done", job.SpanContext.TraceID().String()) {
				t.Errorf("no job line logged with trace_id=%s", job.SpanContext.TraceID())
			}
		})
	}
}

func waitJobSpan(t *testing.T, exp *tracetest.InMemoryExporter) tracetest.SpanStub {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, s := range exp.GetSpans() {
			if strings.HasPrefix(s.Name, "job ") {
				return s
			}
		}
	}
	t.Fatalf("no job span among %v", names(exp.GetSpans()))
	return tracetest.SpanStub{}
}

// logged reports whether a line of msg carries trace_id=id.
func logged(env *testenv.Env, msg, id string) bool {
	for line := range strings.Lines(env.Logs.String()) {
		if strings.Contains(line, `msg="`+msg) && strings.Contains(line, "trace_id="+id) {
			return true
		}
	}
	return false
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
