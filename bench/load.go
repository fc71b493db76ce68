package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// loadConfig says how hard and how long to drive one target.
type loadConfig struct {
	conns    int           // workers, each with at most one connection in use
	warmup   time.Duration // requests not recorded
	duration time.Duration // requests recorded
	timeout  time.Duration // per request
	// atMeasure, if set, is called when the measured window starts.
	atMeasure func()
	// rate, if above 0, is how many requests start per second across all
	// workers: each request is due at its slot of a constant pace, and a
	// worker behind the pace starts its next one at once.
	rate float64
}

// loadResult is what one closed-loop run measured.
type loadResult struct {
	requests   uint64         // completed in the measured window, any outcome
	elapsed    time.Duration  // length of the measured window
	latency    *histogram     // every measured request, errors included
	statuses   map[int]uint64 // measured responses by status code
	errors     uint64         // measured non-2xx responses and transport errors
	transport  uint64         // measured transport errors (no response)
	late       uint64         // in flight at the deadline, finished after it
	lateErrors uint64         // of those, non-2xx or transport errors
	errSamples []string       // a few distinct error descriptions
	// exhausted is set when a finite target ran out of work before the
	// deadline; elapsed then ends at the last measured answer.
	exhausted bool
}

// rps returns completed requests per second over the measured window.
func (r *loadResult) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// newClient returns an HTTP client that keeps up to conns keep-alive
// connections to one host, never uses a proxy, and never compresses.
func newClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A redirect is an answer to measure, not to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

const maxErrSamples = 5

// workerStats is one worker's private record, merged after the run.
type workerStats struct {
	latency    *histogram
	requests   uint64
	statuses   map[int]uint64
	errors     uint64
	transport  uint64
	late       uint64
	lateErrors uint64
	errSamples []string
	exhausted  bool      // the target ran out of work
	lastDone   time.Time // the last measured answer
}

// errExhausted is what a finite target's request returns when it has no
// more work (invite_accept: no fresh user left). The worker stops; it is
// not an error.
var errExhausted = errors.New("target exhausted")

// runLoad drives t with cfg.conns workers, each sending its next request
// as soon as the previous answer has been read (a closed loop), for
// cfg.warmup and then cfg.duration. What completes within the second
// window is recorded: the rate is those completions over the window's
// length, which stays unbiased when latencies are long (a 200-connection
// flood). Every worker stops by itself at the deadline; a request in
// flight then is finished, bounded by cfg.timeout, and only counted
// (late, lateErrors) so that failures in the tail are not lost.
func runLoad(ctx context.Context, client *http.Client, t *runner, cfg loadConfig) *loadResult {
	start := time.Now()
	measureFrom := start.Add(cfg.warmup)
	end := measureFrom.Add(cfg.duration)

	stats := make([]*workerStats, cfg.conns)
	var wg sync.WaitGroup
	p := newPacer(start, cfg.rate)
	for w := range cfg.conns {
		s := &workerStats{latency: newHistogram(), statuses: map[int]uint64{}}
		stats[w] = s
		wg.Go(func() { work(ctx, client, t, w, measureFrom, end, s, p) })
	}
	if cfg.atMeasure != nil {
		select {
		case <-time.After(time.Until(measureFrom)):
			cfg.atMeasure()
		case <-ctx.Done():
		}
	}
	wg.Wait()

	res := &loadResult{latency: newHistogram(), statuses: map[int]uint64{}, elapsed: cfg.duration}
	seen := map[string]bool{}
	var lastDone time.Time
	for _, s := range stats {
		res.exhausted = res.exhausted || s.exhausted
		if s.lastDone.After(lastDone) {
			lastDone = s.lastDone
		}
		res.latency.merge(s.latency)
		res.requests += s.requests
		res.errors += s.errors
		res.transport += s.transport
		res.late += s.late
		res.lateErrors += s.lateErrors
		for code, n := range s.statuses {
			res.statuses[code] += n
		}
		for _, e := range s.errSamples {
			if !seen[e] && len(res.errSamples) < maxErrSamples {
				seen[e] = true
				res.errSamples = append(res.errSamples, e)
			}
		}
	}
	if res.exhausted && !lastDone.IsZero() && lastDone.Before(end) {
		// A finite target that ran dry: the window is as long as it lasted.
		res.elapsed = lastDone.Sub(measureFrom)
	}
	return res
}

// work is one worker's loop.
func work(ctx context.Context, client *http.Client, t *runner, w int, measureFrom, end time.Time, s *workerStats, p *pacer) {
	for ctx.Err() == nil {
		if !p.wait(ctx, end) || !time.Now().Before(end) {
			return
		}
		req, err := t.request(w)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errExhausted) {
				s.exhausted = true
				return
			}
			// A request that cannot be built (or a chain that cannot be
			// restarted) ends this worker rather than spinning on it.
			s.noteError(fmt.Sprintf("build request: %v", err))
			s.transport++
			s.errors++
			return
		}
		began := time.Now()
		status, body, err := do(ctx, client, req, t.wantsBody())
		done := time.Now()
		measured := !done.Before(measureFrom) && !done.After(end)
		if measured {
			s.requests++
			s.latency.record(done.Sub(began))
			s.lastDone = done
		}
		late := done.After(end)
		if late {
			s.late++
			if ctx.Err() == nil && (err != nil || !t.ok(status)) {
				s.lateErrors++
				if err != nil {
					s.noteError(fmt.Sprintf("after the deadline, transport: %v", err))
				} else {
					s.noteError(fmt.Sprintf("after the deadline, %d %s", status, snippet(body)))
				}
			}
		}
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return // interrupted: not the server's fault
			}
			if measured {
				s.transport++
				s.errors++
				s.noteError(fmt.Sprintf("transport: %v", err))
			}
			t.response(w, 0, nil) // a chain may have lost its token
		case !t.ok(status):
			if measured {
				s.statuses[status]++
				s.errors++
				s.noteError(fmt.Sprintf("%d %s", status, snippet(body)))
			}
			t.response(w, status, body)
		default:
			if measured {
				s.statuses[status]++
			}
			t.response(w, status, body)
		}
	}
}

func (s *workerStats) noteError(e string) {
	if len(s.errSamples) >= maxErrSamples {
		return
	}
	for _, have := range s.errSamples {
		if have == e {
			return
		}
	}
	s.errSamples = append(s.errSamples, e)
}

// do sends req and reads the whole answer so the connection is reused.
// The body is kept when keep is true or the status is not 2xx.
func do(ctx context.Context, client *http.Client, req *http.Request, keep bool) (int, []byte, error) {
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if keep || resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		return resp.StatusCode, body, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil, err
}

// snippet shortens a response body for an error report.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// statusSummary formats status counts as "200×1234 401×5".
func statusSummary(m map[int]uint64) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d×%d", c, m[c])
	}
	return strings.Join(parts, " ")
}

// pacer hands out request start times rate per second apart, from start;
// a nil pacer (no rate) lets every worker go at once.
type pacer struct {
	mu   sync.Mutex
	next time.Time
	gap  time.Duration
}

func newPacer(start time.Time, rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{next: start, gap: time.Duration(float64(time.Second) / rate)}
}

// wait blocks until the caller's start time; false when it would fall at
// or after end, or ctx ended first. A worker that falls behind the pace
// starts at once (its slot is past), so the rate is a ceiling.
func (p *pacer) wait(ctx context.Context, end time.Time) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	at := p.next
	p.next = at.Add(p.gap)
	p.mu.Unlock()
	if !at.Before(end) {
		return false
	}
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
