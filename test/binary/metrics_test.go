package binary

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var metricsLine = regexp.MustCompile(`metrics on (http://[0-9.]+:[0-9]+)/metrics`)

// TestBinaryMetrics: the shipped binary with GATEHOUSE_METRICS_ADDR
// serves the Prometheus exposition and pprof on that private listener,
// counting the requests of the public one by route pattern, and the
// public listener serves neither.
func TestBinaryMetrics(t *testing.T) {
	s := start(t, testenv.FreshURL(t, "sqlite"), "GATEHOUSE_METRICS_ADDR=127.0.0.1:0")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no \"metrics on …\" line; log:\n%s", s.tail())
	}
	s.do(t, "GET", "/health", "", nil, 200)
	s.do(t, "GET", "/ready", "", nil, 200)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get(m[1] + "/metrics")
	for _, want := range []string{`gatehouse_http_requests_total{method="GET",route="GET /health",status="200"} 1`, "go_goroutines", `db_name="writer"`} {
		if status != 200 || !strings.Contains(body, want) {
			t.Errorf("GET /metrics: %d, lacks %s", status, want)
		}
	}
	if status, _ := get(m[1] + "/debug/pprof/"); status != 200 {
		t.Errorf("GET /debug/pprof/ on the metrics listener: %d; want 200", status)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		if status, _ := get(s.base + path); status != 404 {
			t.Errorf("GET %s on the public listener: %d; want 404", path, status)
		}
	}
}
