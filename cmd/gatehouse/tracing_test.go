package main

import (
	"strings"
	"testing"
)

// TestTracingSetting: traces are off by default, on with
// GATEHOUSE_OTEL_ENDPOINT or OpenTelemetry's own endpoint variables, off
// again with OTEL_SDK_DISABLED=true; an endpoint that is not an http(s)
// URL stops start-up naming the setting.
func TestTracingSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"GATEHOUSE_OTEL_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"GATEHOUSE_OTEL_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		c, err := loadConfig(nil, testGetenv(tc.env))
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		if c.tracing() != tc.want {
			t.Errorf("%v: tracing %v; want %v", tc.env, c.tracing(), tc.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:4318", "grpc://collector:4317", "http://collector:4318/?x=1"} {
		if _, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_OTEL_ENDPOINT": bad})); err == nil || !strings.Contains(err.Error(), "GATEHOUSE_OTEL_ENDPOINT") {
			t.Errorf("%q: %v; want an error naming GATEHOUSE_OTEL_ENDPOINT", bad, err)
		}
	}
}
