package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestScrapeGauge reads an unlabelled gauge from a Prometheus page, not a
// metric whose name it prefixes.
func TestScrapeGauge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# HELP go_goroutines Number of goroutines.\ngo_goroutines_total 9\ngo_goroutines 42\n"))
	}))
	defer srv.Close()
	if n, err := scrapeGauge(srv.URL, "go_goroutines"); err != nil || n != 42 {
		t.Errorf("scrapeGauge = %d, %v; want 42", n, err)
	}
	if _, err := scrapeGauge(srv.URL, "process_resident_memory_bytes"); err == nil {
		t.Error("a missing gauge read without error")
	}
}

// TestOpsFlags: -limits takes off, local or shared; -soak and -limits
// need a server the bench starts.
func TestOpsFlags(t *testing.T) {
	for _, args := range [][]string{{"-limits", "maybe"}, {"-soak", "1m", "-url", "http://127.0.0.1:8080"}, {"-limits", "shared", "-url", "http://127.0.0.1:8080"}} {
		if _, err := parseFlags(args, nopWriter{}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if c, err := parseFlags([]string{"-limits", "shared", "-soak", "1m"}, nopWriter{}); err != nil || c.soak.Minutes() != 1 || len(c.limitsEnv()) != 2 {
		t.Errorf("-limits shared -soak 1m: %+v, %v", c.limitsEnv(), err)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
