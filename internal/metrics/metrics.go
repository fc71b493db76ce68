// Package metrics is the one place Gatehouse meets Prometheus: a Metrics
// value is the observer the HTTP kernel (web.Observer), the security
// events (web.SecurityLog) and the job engine report to, and Handler
// serves its exposition with Go's runtime metrics and net/http/pprof on
// the private listener (GATEHOUSE_METRICS_ADDR). No module imports
// Prometheus; no label holds user data: routes are patterns, methods and
// event attributes come from fixed sets, anything else is "other".
package metrics

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse/gatehouse"
)

// Metrics holds Gatehouse's collectors on a registry of its own.
type Metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	signIns    *prometheus.CounterVec
	refusals   *prometheus.CounterVec
	events     *prometheus.CounterVec
	jobs       *prometheus.CounterVec
	jobLatency *prometheus.HistogramVec
	// answered caches each (route, method, status)'s counter and
	// histogram: the vectors' lookup hashes and checks the label values
	// on every request (a quarter of what metrics cost a verify).
	answered sync.Map // requestKey -> requestSeries
}

type requestKey struct {
	pattern, method string
	status          int
}

type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// New returns the collectors, the Go runtime's and the process's
// registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status."}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gatehouse_http_request_duration_seconds",
		Help: "Time to answer an HTTP request, by route pattern and method.", Buckets: prometheus.DefBuckets}, []string{"route", "method"})
	m.signIns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_signins_total",
		Help: "Sign-ins by method and outcome (success, failure, pending)."}, []string{"method", "outcome"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_rate_limited_total",
		Help: "Requests refused by an abuse limit (429), by limiter."}, []string{"limiter"})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_security_events_total",
		Help: "Security events by name (docs/security-logging.md)."}, []string{"event"})
	m.jobs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_jobs_total",
		Help: "Background jobs worked, by kind (mail, webhook delivery, logout, schedule) and outcome."}, []string{"kind", "outcome"})
	m.jobLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gatehouse_job_duration_seconds",
		Help: "Time to work a background job, by kind.", Buckets: prometheus.DefBuckets}, []string{"kind"})
	m.reg.MustRegister(m.requests, m.latency, m.signIns, m.refusals, m.events, m.jobs, m.jobLatency,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request counts one answered request (web.Observer). pattern is the
// route's pattern, never its path; "" (no route) is counted as
// "unmatched".
func (m *Metrics) Request(pattern, method string, status int, d time.Duration) {
	if pattern == "" {
		pattern = "unmatched"
	}
	method = knownMethod(method)
	k := requestKey{pattern, method, status}
	v, ok := m.answered.Load(k)
	if !ok {
		v, _ = m.answered.LoadOrStore(k, requestSeries{m.requests.WithLabelValues(pattern, method, strconv.Itoa(status)),
			m.latency.WithLabelValues(pattern, method)})
	}
	s := v.(requestSeries)
	s.count.Inc()
	s.latency.Observe(d.Seconds())
}

// Event counts a security event (web.SecurityLog): every one by name,
// sign-ins by method and outcome, rate-limit refusals by limiter. Only
// the method and limiter attributes are read, and only values from their
// fixed sets: the others (user ids, client ids, reasons) never become
// labels.
func (m *Metrics) Event(e gatehouse.SecurityEvent, attrs []slog.Attr) {
	m.events.WithLabelValues(knownEvent(e)).Inc()
	switch e {
	case gatehouse.EventSignIn:
		outcome := "success"
		if attrBool(attrs, "second_factor_owed") {
			outcome = "pending"
		}
		m.signIns.WithLabelValues(oneOf(attr(attrs, "method"), signInMethods), outcome).Inc()
	case gatehouse.EventSignInFailure:
		m.signIns.WithLabelValues(oneOf(attr(attrs, "method"), signInMethods), "failure").Inc()
	case gatehouse.EventRateLimited:
		m.refusals.WithLabelValues(identifier(attr(attrs, "limiter"))).Inc()
	}
}

// Job counts a worked job of kind and its outcome (completed, snoozed,
// cancelled, retry, discarded).
func (m *Metrics) Job(kind, outcome string, d time.Duration) {
	kind = identifier(kind)
	m.jobs.WithLabelValues(kind, oneOf(outcome, jobOutcomes)).Inc()
	m.jobLatency.WithLabelValues(kind).Observe(d.Seconds())
}

// DBPool reports db's pool use and waits under name (writer, reader);
// the first pool registered under a name is the one reported.
func (m *Metrics) DBPool(db *sql.DB, name string) {
	_ = m.reg.Register(collectors.NewDBStatsCollector(db, name))
}

// Gauge reports the value of f, read at each scrape, as name; the first
// f registered under a name is the one reported.
func (m *Metrics) Gauge(name, help string, f func() float64) {
	_ = m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Sample is one value of a gauge read at scrape time, with its label
// values in the order the gauge names them.
type Sample struct {
	Labels []string
	Value  float64
}

// Gauges reports the samples f returns at each scrape as name with
// labels; label values go through the same check as job kinds
// (identifier). f is given a context bounded by the scrape's own timeout.
func (m *Metrics) Gauges(name, help string, labels []string, f func(ctx context.Context) ([]Sample, error)) {
	_ = m.reg.Register(&gauges{desc: prometheus.NewDesc(name, help, labels, nil), read: f})
}

type gauges struct {
	desc *prometheus.Desc
	read func(ctx context.Context) ([]Sample, error)
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	samples, err := g.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(g.desc, err)
		return
	}
	for _, s := range samples {
		values := make([]string, len(s.Labels))
		for i, v := range s.Labels {
			values[i] = identifier(v)
		}
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, s.Value, values...)
	}
}

// Handler serves GET /metrics (the exposition) and /debug/pprof/: for
// the private listener only.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// The fixed sets labels are taken from.
var (
	methods       = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	signInMethods = []string{"password", "magic_link", "passkey", "api_key", "oauth_code", "oauth_refresh", "oauth_device", "totp", "recovery_code"}
	jobOutcomes   = []string{"completed", "snoozed", "cancelled", "retry", "discarded"}
)

func knownMethod(m string) string { return oneOf(m, methods) }

func knownEvent(e gatehouse.SecurityEvent) string {
	for _, k := range gatehouse.SecurityEvents() {
		if k == e {
			return string(e)
		}
	}
	return "other"
}

// identifier is name when it is a short identifier chosen in code (a
// limiter's name, a job's kind), "other" when it is not.
func identifier(name string) string {
	if name == "" {
		return "unknown"
	}
	if len(name) > 40 {
		return "other"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return "other"
		}
	}
	return name
}

func oneOf(v string, set []string) string {
	for _, s := range set {
		if s == v {
			return v
		}
	}
	return "other"
}

func attr(attrs []slog.Attr, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value.String()
		}
	}
	return ""
}

func attrBool(attrs []slog.Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value.Kind() == slog.KindBool && a.Value.Bool()
		}
	}
	return false
}
