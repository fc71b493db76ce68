package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestLabelsFromFixedSets: values that are not from a label's fixed set
// (a method invented by a client, an email as a sign-in method, a limiter
// name holding an address) are counted as "other", never as themselves.
func TestLabelsFromFixedSets(t *testing.T) {
	m := New()
	m.Request("", "BREW", 405, time.Millisecond)
	m.Event(gatehouse.EventRateLimited, []slog.Attr{slog.String("limiter", "magicLink"), slog.String("path", "/v1/x/ann@example.com")})
	m.Event(gatehouse.EventRateLimited, []slog.Attr{slog.String("limiter", "ann@example.com")})
	m.Event(gatehouse.EventSignInFailure, []slog.Attr{slog.String("method", "ann@example.com"), slog.String("reason", "ann@example.com")})
	m.Event(gatehouse.EventSignIn, []slog.Attr{slog.String("method", "passkey"), slog.Bool("second_factor_owed", true)})
	m.Event("made.up", nil)
	m.Job("mail", "completed", time.Second)
	m.Job("ann@example.com", "whatever", time.Second)
	out := scrape(t, m)
	for _, want := range []string{
		`gatehouse_http_requests_total{method="other",route="unmatched",status="405"} 1`,
		`gatehouse_rate_limited_total{limiter="magicLink"} 1`,
		`gatehouse_rate_limited_total{limiter="other"} 1`,
		`gatehouse_signins_total{method="other",outcome="failure"} 1`,
		`gatehouse_signins_total{method="passkey",outcome="pending"} 1`,
		`gatehouse_security_events_total{event="other"} 1`,
		`gatehouse_jobs_total{kind="mail",outcome="completed"} 1`,
		`gatehouse_jobs_total{kind="other",outcome="other"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "example.com") || strings.Contains(out, "BREW") {
		t.Error("a label holds a value from outside its fixed set")
	}
}

// TestPprofOnHandler: the private handler serves pprof as well as the
// exposition.
func TestPprofOnHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	New().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/goroutine?debug=1", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("GET /debug/pprof/goroutine: status %d", rec.Code)
	}
}

// TestGaugesReadAtScrape: a gauge of samples is read at each scrape, its
// label values checked like job kinds.
func TestGaugesReadAtScrape(t *testing.T) {
	m := New()
	n := 0.0
	m.Gauges("gatehouse_job_queue_depth", "test", []string{"kind", "state"}, func(context.Context) ([]Sample, error) {
		n++
		return []Sample{{Labels: []string{"mail", "available"}, Value: n}, {Labels: []string{"ann@example.com", "running"}, Value: 1}}, nil
	})
	scrape(t, m)
	out := scrape(t, m)
	for _, want := range []string{`gatehouse_job_queue_depth{kind="mail",state="available"} 2`, `gatehouse_job_queue_depth{kind="other",state="running"} 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
