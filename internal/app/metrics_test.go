package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/metrics"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// scrape returns the exposition of m.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// uuidLike matches an id of a person, session or org in a label.
var uuidLike = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestMetricsAfterWorkload: a scripted workload (sign-up, sign-ins that
// succeed and fail, a refresh, mail sent, a path naming an email, an
// invented method) shows in the counters by route pattern, method,
// outcome and job kind, with the pools, the hash queue and the Go
// runtime; and no label holds an email, a token or an id.
func TestMetricsAfterWorkload(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			m := metrics.New()
			env := testenv.New(t, db, testenv.Options{Metrics: m})
			a := env.Register(t)
			env.Login(t, a.Email, a.Password).Want(t, 200)
			env.Login(t, a.Email, "wrong-password").Want(t, 401)
			r := env.Refresh(t, a.Refresh).Want(t, 200)
			env.Do(t, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
			env.Call(t, "GET", "/v1/users/"+a.Email+"/"+a.UserID, "", nil)
			req, _ := http.NewRequest("BREW", env.URL+"/v1/me?token="+a.Refresh, nil)
			if resp, err := env.Client.Do(req); err == nil {
				resp.Body.Close()
			}
			env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": a.Email})
			env.MagicToken(t, a.Email)

			var out string
			// The mail job's outcome is counted just after the mail is out.
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if out = scrape(t, m); strings.Contains(out, `gatehouse_jobs_total{kind="mail",outcome="completed"}`) {
					break
				}
			}
			for _, want := range []string{
				`gatehouse_http_requests_total{method="POST",route="POST /v1/auth/login",status="200"} 1`,
				`gatehouse_http_requests_total{method="POST",route="POST /v1/auth/login",status="401"} 1`,
				`gatehouse_http_requests_total{method="other",route="unmatched",status="405"}`,
				`gatehouse_http_request_duration_seconds_bucket{method="GET",route="GET /v1/auth/me",le="+Inf"} 1`,
				`gatehouse_signins_total{method="password",outcome="success"} 1`,
				`gatehouse_signins_total{method="password",outcome="failure"} 1`,
				`gatehouse_jobs_total{kind="mail",outcome="completed"}`,
				`go_goroutines `, `go_sched_gomaxprocs_threads`,
				`go_sql_open_connections{db_name="writer"}`,
				`gatehouse_password_hash_waiting 0`,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("scrape lacks %s", want)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "#") {
					continue
				}
				labels, _, _ := strings.Cut(line, "} ")
				for _, secret := range []string{a.Email, a.Password, a.Refresh, a.Access, "BREW", "@"} {
					if strings.Contains(labels, secret) {
						t.Errorf("a label holds %q: %s", secret, line)
					}
				}
				if uuidLike.MatchString(labels) {
					t.Errorf("a label holds an id: %s", line)
				}
			}
		})
	}
}
