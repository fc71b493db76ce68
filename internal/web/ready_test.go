package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/web"
)

// TestReady: GET /ready answers 200 while Ready passes, 503 with Ready's
// safe message when it fails, and "not ready" alone when the failure is
// internal (its cause is logged, not shown).
func TestReady(t *testing.T) {
	var err error
	k := web.NewServer(web.Config{Ready: func(context.Context) error { return err }})
	for _, c := range []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
	}{
		{"ready", nil, 200, `{"status":"ready"}`},
		{"safe reason", gatehouse.Errorf(gatehouse.KindUnavailable, "job workers are not running"), 503, `{"error":"job workers are not running"}`},
		{"internal", errors.New("dial tcp 10.0.0.5:5432: secret detail"), 503, `{"error":"not ready"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err = c.err
			rec := httptest.NewRecorder()
			k.ServeHTTP(rec, httptest.NewRequest("GET", "/ready", nil))
			var got, want any
			json.Unmarshal(rec.Body.Bytes(), &got)
			json.Unmarshal([]byte(c.wantBody), &want)
			if rec.Code != c.wantStatus || !jsonEqual(got, want) {
				t.Errorf("GET /ready: %d %s; want %d %s", rec.Code, rec.Body, c.wantStatus, c.wantBody)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// observed records what the kernel reports.
type observed struct {
	patterns []string
	statuses []int
	events   []gatehouse.SecurityEvent
}

func (o *observed) Request(pattern, _ string, status int, _ time.Duration) {
	o.patterns = append(o.patterns, pattern)
	o.statuses = append(o.statuses, status)
}
func (o *observed) Event(e gatehouse.SecurityEvent, _ []slog.Attr) { o.events = append(o.events, e) }

// TestObserverSeesPatterns: the observer is told each request's route
// pattern, never its path, and its status, panics and unknown routes
// included, and the kernel's security events.
func TestObserverSeesPatterns(t *testing.T) {
	o := &observed{}
	k := web.NewServer(web.Config{Observer: o})
	k.Mux().HandleFunc("GET /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	k.Mux().HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	for _, p := range []string{"/v1/things/ann@example.com", "/nowhere/ann@example.com", "/boom", "/v1/me"} {
		k.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	want := []string{"GET /v1/things/{id}", "", "GET /boom", ""}
	wantStatus := []int{204, 404, 500, 404}
	for i := range want {
		if i >= len(o.patterns) || o.patterns[i] != want[i] || o.statuses[i] != wantStatus[i] {
			t.Fatalf("observed %q %v; want %q %v", o.patterns, o.statuses, want, wantStatus)
		}
	}
	web.SecurityLog{Log: slog.New(slog.DiscardHandler), Observer: o}.Event(context.Background(), gatehouse.EventSignIn)
	if len(o.events) != 1 || o.events[0] != gatehouse.EventSignIn {
		t.Errorf("observed events %v; want the sign-in", o.events)
	}
}
