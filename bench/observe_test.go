package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestObserveFlags: -observe measures verify and refresh unless told
// otherwise, starts its own servers, and takes no target that runs dry
// or the baseline.
func TestObserveFlags(t *testing.T) {
	c, err := parseFlags([]string{"-observe", "3"}, nopWriter{})
	if err != nil || c.observe != 3 || !slices.Equal(c.targets, []string{"verify", "refresh"}) {
		t.Errorf("-observe 3: targets %q, %v", c.targets, err)
	}
	for _, args := range [][]string{{"-observe", "-1"}, {"-observe", "2", "-url", "http://127.0.0.1:8080"}, {"-observe", "2", "-metrics", "127.0.0.1:6061"},
		{"-observe", "2", "-targets", "baseline,verify"}, {"-observe", "2", "-targets", "passkey_signin"}} {
		if _, err := parseFlags(args, nopWriter{}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestPairedChange: the mean relative change of the pairs and its
// standard error, with fewer than two pairs unknown.
func TestPairedChange(t *testing.T) {
	rps := func(p observePair) [2]float64 { return p.rps }
	got := pairedChange([]observePair{{rps: [2]float64{100, 98}}, {rps: [2]float64{200, 192}}, {rps: [2]float64{50, 50}}}, rps)
	// changes -2%, -4%, 0%: mean -2, sd 2, se 2/sqrt(3)
	if math.Abs(got[0]+2) > 1e-9 || math.Abs(got[1]-2/math.Sqrt(3)) > 1e-9 {
		t.Errorf("pairedChange = %v; want [-2 %v]", got, 2/math.Sqrt(3))
	}
	if got := pairedChange([]observePair{{rps: [2]float64{1, 2}}}, rps); !math.IsNaN(got[0]) {
		t.Errorf("one pair: %v; want NaN", got)
	}
}

// TestScrapeSum adds every series of a labelled counter, and no metric
// whose name it prefixes.
func TestScrapeSum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# TYPE x_total counter\nx_total{route=\"a\"} 3\nx_total{route=\"b\"} 4.5\nx_total_other 100\n"))
	}))
	defer srv.Close()
	if n, err := scrapeSum(srv.URL, "x_total"); err != nil || n != 7.5 {
		t.Errorf("scrapeSum = %v, %v; want 7.5", n, err)
	}
}
