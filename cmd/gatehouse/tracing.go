package main

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/tracing"
)

// otelEnv is what OpenTelemetry's own variables ask: an exporter endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or its _TRACES_ form, which the exporter
// reads itself), OTEL_SDK_DISABLED
// and OTEL_TRACES_SAMPLER (the SDK reads it; unset, one trace in twenty is
// recorded: tracing.DefaultRatio).
type otelEnv struct{ endpoint, disabled, sampler bool }

func readOTelEnv(getenv func(string) string) otelEnv {
	return otelEnv{endpoint: getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "",
		disabled: strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"), sampler: getenv("OTEL_TRACES_SAMPLER") != ""}
}

// tracing reports whether traces are exported: an endpoint is configured
// and the SDK is not disabled. Off by default.
func (c *Config) tracing() bool {
	return (c.OTelEndpoint != "" || c.otel.endpoint) && !c.otel.disabled
}

// checkOTelEndpoint accepts "" or an http(s) URL without query.
func checkOTelEndpoint(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return errors.New("want the http(s) base URL of an OTLP/HTTP receiver, such as http://127.0.0.1:4318")
	}
	return nil
}

// startTracing starts the exporter when c asks for traces and returns the
// tracer (nil when off), the logger with trace ids, and what stops it
// (exporting the spans still buffered, 5 s at most).
func startTracing(ctx context.Context, c *Config, log *slog.Logger) (*tracing.Tracer, *slog.Logger, func(), error) {
	if !c.tracing() {
		return nil, log, func() {}, nil
	}
	t, err := tracing.New(ctx, tracing.Config{Endpoint: c.OTelEndpoint, Service: "gatehouse", Version: versionString(),
		EnvSampler: c.otel.sampler})
	if err != nil {
		return nil, log, nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			log.Warn("traces: shut down", "err", err)
		}
	}
	log = slog.New(tracing.LogHandler(log.Handler()))
	log.Info("traces on", "endpoint", c.OTelEndpoint)
	return t, log, stop, nil
}
