package web_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/web"
)

// TestSecurityLogJSON: with the JSON handler (GATEHOUSE_LOG_FORMAT=json)
// every refusal is one JSON object per line, with the request's id, client
// and user agent, whatever newlines the path carried; a per-IP limiter's
// refusal names it.
func TestSecurityLogJSON(t *testing.T) {
	logs := &testenv.LockedBuffer{}
	k := web.NewServer(web.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil)), RateLimit: true})
	k.Mux().Handle("GET /v1/things/{id}", k.Authed(func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error { return nil }))
	lim := k.Limiter("things", 1, time.Hour)
	k.Mux().Handle("POST /v1/things", k.PerIP(lim, func(w http.ResponseWriter, r *http.Request) error { return nil }))

	req := httptest.NewRequest("GET", "/v1/things/x%0A%7B%22event%22:%22auth.signin.success%22%7D", nil)
	req.Header.Set("User-Agent", `agent "quoted"`)
	rec := httptest.NewRecorder()
	k.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Fatalf("no token: %d; want 401", rec.Code)
	}
	for i := 0; i < 2; i++ {
		rec2 := httptest.NewRecorder()
		k.ServeHTTP(rec2, httptest.NewRequest("POST", "/v1/things", nil))
		if want := []int{200, 429}[i]; rec2.Code != want {
			t.Fatalf("post %d: %d; want %d", i+1, rec2.Code, want)
		}
	}

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q is not one JSON object: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d log lines; want 2:\n%s", len(lines), logs)
	}
	refused, limited := lines[0], lines[1]
	for k, want := range map[string]any{"event": "http.refused", "msg": "security event", "level": "WARN", "status": float64(401),
		"path": "/v1/things/x\n{\"event\":\"auth.signin.success\"}", "request_id": rec.Header().Get("X-Request-Id"),
		"ip": "192.0.2.1", "user_agent": `agent "quoted"`, "reason": "missing bearer token"} {
		if refused[k] != want {
			t.Errorf("refusal %s = %#v; want %#v", k, refused[k], want)
		}
	}
	if limited["event"] != "http.rate_limited" || limited["limiter"] != "things" || limited["status"] != float64(429) {
		t.Errorf("rate-limit line = %v; want http.rate_limited naming the limiter things", limited)
	}
}
