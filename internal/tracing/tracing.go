// Package tracing is the one adapter to OpenTelemetry: spans for HTTP
// requests (started by the kernel), database statements and transactions
// (sqlstore) and jobs (internal/jobs), exported over OTLP/HTTP, and the
// trace id in log lines. Off unless an endpoint is configured
// (GATEHOUSE_OTEL_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT); modules never
// import OpenTelemetry, they ask for a span through a one-method interface
// of their own.
package tracing

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracer starts Gatehouse's spans. A nil *Tracer starts none; callers
// hold it behind their own interface and leave it unset when tracing is
// off, so the hot paths pay nothing.
type Tracer struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
	prop     propagation.TraceContext
	// ratio is the share of root spans recorded, decided before the SDK
	// is asked (sampled); 0: the SDK's sampler decides every span.
	ratio float64
}

// Config says where spans go.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL (http://collector:4318; spans are
	// posted to its /v1/traces); "": the exporter's own OTEL_EXPORTER_OTLP_*
	// variables.
	Endpoint string
	// Service and Version name the resource (service.name, service.version).
	Service, Version string
	// EnvSampler says OTEL_TRACES_SAMPLER is set: the SDK's sampler from
	// it decides every span. Otherwise a share DefaultRatio of traces is
	// recorded (sampled).
	EnvSampler bool
}

// DefaultRatio is the share of traces recorded unless OTEL_TRACES_SAMPLER
// says otherwise: a span of every request cost verify 3-4% of its CPU and
// refresh more (BENCHMARKS.md), over the 3% an operator should pay for
// traces by default. OTEL_TRACES_SAMPLER=parentbased_always_on records all.
const DefaultRatio = 0.05

// dropped marks the context of a root the ratio left out: its children
// start no span either (unsampled), and no log line names it.
var dropped = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xff}, SpanID: trace.SpanID{0xff}})

// droppedSpan is the span of dropped, made once: marking a context is
// then one value, not a span and a value each time.
var droppedSpan = trace.SpanFromContext(trace.ContextWithSpanContext(context.Background(), dropped))

// sampled decides, for a span about to start in ctx, whether it records:
// a span with a parent follows it (the SDK's parent-based sampler: an
// unsampled parent's children start nothing); a root records with
// probability t.ratio, and one left out gets the dropped mark without the
// SDK's span, ids or context (most of a span's cost). root says ctx holds
// no span (an untrusted request): no need to look.
func (t *Tracer) sampled(ctx context.Context, root bool) (context.Context, bool) {
	if !root {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			return ctx, sc.IsSampled() || t.ratio == 0
		}
	}
	if t.ratio == 0 || rand.Float64() < t.ratio {
		return ctx, true
	}
	return trace.ContextWithSpan(ctx, droppedSpan), false
}

// New returns a Tracer exporting over OTLP/HTTP in batches. The SDK's
// OTEL_* variables (headers, sampler, timeouts) apply.
func New(ctx context.Context, c Config) (*Tracer, error) {
	var opts []otlptracehttp.Option
	if c.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(c.Endpoint, "/")+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if c.EnvSampler {
		return newTracer(c, sdktrace.WithBatcher(exp)), nil
	}
	t := newTracer(c, sdktrace.WithBatcher(exp), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	t.ratio = DefaultRatio
	return t, nil
}

// NewWith returns a Tracer handing each ended span to exp at once (tests:
// the SDK's in-memory exporter).
func NewWith(exp sdktrace.SpanExporter, c Config) *Tracer {
	return newTracer(c, sdktrace.WithSyncer(exp))
}

func newTracer(c Config, opts ...sdktrace.TracerProviderOption) *Tracer {
	res := resource.NewSchemaless(attribute.String("service.name", c.Service), attribute.String("service.version", c.Version))
	p := sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...)
	return &Tracer{tracer: p.Tracer("github.com/gatehouse/gatehouse"), provider: p}
}

// Shutdown exports what is left and stops.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Request starts the server span of r, a child of the caller's W3C
// traceparent only when trusted (the peer is a trusted proxy: anyone
// else could pick trace ids or force sampling). end names it by the
// route pattern ("" when none matched: no path, which may hold ids) and
// records the status.
func (t *Tracer) Request(r *http.Request, trusted bool) (context.Context, func(pattern string, status int)) {
	ctx := r.Context()
	if trusted {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ctx, ok := t.sampled(ctx, !trusted)
	if !ok {
		return ctx, endNothing
	}
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, func(pattern string, status int) {
		if !span.IsRecording() { // not sampled: nothing to name
			span.End()
			return
		}
		attrs := [3]attribute.KeyValue{attribute.String("http.request.method", r.Method), attribute.Int("http.response.status_code", status)}
		n := 2
		if pattern != "" {
			_, route, _ := strings.Cut(pattern, " ")
			span.SetName(r.Method + " " + route)
			attrs[n] = attribute.String("http.route", route)
			n++
		}
		span.SetAttributes(attrs[:n]...)
		if status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		span.End()
	}
}

func nop(error) {}

func endNothing(string, int) {}

func endNoJob(string, error) {}

// Query starts the client span of one database statement or transaction
// (statement "BEGIN…COMMIT"): its text has placeholders, never values.
func (t *Tracer) Query(ctx context.Context, system, statement string) (context.Context, func(error)) {
	ctx, ok := t.sampled(ctx, false)
	if !ok {
		return ctx, nop
	}
	op, _, _ := strings.Cut(strings.TrimSpace(statement), " ")
	ctx, span := t.tracer.Start(ctx, strings.ToUpper(op), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", system), attribute.String("db.query.text", statement)))
	return ctx, func(err error) { end(span, err) }
}

// Job starts the span of one try of a background job of kind.
func (t *Tracer) Job(ctx context.Context, kind string, attempt int) (context.Context, func(outcome string, err error)) {
	ctx, ok := t.sampled(ctx, false)
	if !ok {
		return ctx, endNoJob
	}
	ctx, span := t.tracer.Start(ctx, "job "+kind, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("job.kind", kind), attribute.Int("job.attempt", attempt)))
	return ctx, func(outcome string, err error) {
		span.SetAttributes(attribute.String("job.outcome", outcome))
		end(span, err)
	}
}

// end records err (its text: our errors carry no secret) and ends span.
func end(span trace.Span, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
