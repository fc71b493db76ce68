package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunLoadCountsAndStops(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every tenth request fails; the body echoes the worker's counter.
		if n.Add(1)%10 == 0 {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
			return
		}
		w.Write([]byte(r.URL.Query().Get("i")))
	}))
	defer srv.Close()

	const workers = 4
	next := make([]int, workers) // next[w]: written by worker w only
	r := &runner{
		request: func(w int) (*http.Request, error) {
			return http.NewRequest(http.MethodGet, srv.URL+"/?i="+strconv.Itoa(next[w]+1), nil)
		},
		onResponse: func(w, status int, body []byte) {
			if status == http.StatusOK {
				next[w], _ = strconv.Atoi(string(body))
			}
		},
	}
	cfg := loadConfig{conns: workers, warmup: 100 * time.Millisecond, duration: 300 * time.Millisecond, timeout: time.Second}
	began := time.Now()
	res := runLoad(context.Background(), newClient(workers, time.Second), r, cfg)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("runLoad took %v, want it to stop by itself after about 400ms", took)
	}
	if res.requests == 0 {
		t.Fatal("no requests recorded")
	}
	if got, want := res.statuses[200]+res.statuses[500], res.requests; got != want {
		t.Errorf("statuses sum to %d, want requests %d", got, want)
	}
	if res.errors != res.statuses[500] || res.errors == 0 {
		t.Errorf("errors = %d, want the 500s (%d) and more than none", res.errors, res.statuses[500])
	}
	if res.latency.count() != res.requests {
		t.Errorf("latencies recorded = %d, want %d", res.latency.count(), res.requests)
	}
	if res.elapsed != cfg.duration {
		t.Errorf("elapsed = %v, want the window %v", res.elapsed, cfg.duration)
	}
	for w, v := range next {
		if v == 0 {
			t.Errorf("worker %d: onResponse never advanced its chain", w)
		}
	}
	if len(res.errSamples) == 0 {
		t.Error("no error sample kept")
	}
}

func TestRunLoadStopsOnCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	r := &runner{request: func(int) (*http.Request, error) { return http.NewRequest(http.MethodGet, srv.URL, nil) }}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	runLoad(ctx, newClient(2, time.Second), r, loadConfig{conns: 2, duration: time.Minute, timeout: time.Second})
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("runLoad took %v after its context ended", took)
	}
}

// A rate paces the requests of all workers together: at 50/s for 400 ms,
// four workers that could do thousands start about 20.
func TestRunLoadRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	r := &runner{request: func(int) (*http.Request, error) { return http.NewRequest(http.MethodGet, srv.URL, nil) }}
	cfg := loadConfig{conns: 4, duration: 400 * time.Millisecond, timeout: time.Second, rate: 50}
	res := runLoad(context.Background(), newClient(4, time.Second), r, cfg)
	if res.requests < 15 || res.requests > 21 {
		t.Errorf("%d requests at 50/s for 400ms; want about 20", res.requests)
	}
}
