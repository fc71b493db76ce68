package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/web"
)

// TestZeroConfig: a kernel whose Config leaves the health check, the
// logger and the clock unset serves GET /health and runs its limiters on
// the real time, rather than calling a nil function.
func TestZeroConfig(t *testing.T) {
	k := web.NewServer(web.Config{RateLimit: true})
	rec := httptest.NewRecorder()
	k.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /health: %d %s; want 200", rec.Code, rec.Body)
	}
	l := k.Limiter("zero", 1, time.Hour)
	if ok, _ := l.Allow("k"); !ok {
		t.Error("first request refused")
	}
	if ok, _ := l.Allow("k"); ok {
		t.Error("second request within the hour allowed")
	}
}
