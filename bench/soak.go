package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// soakTargets are the soak's mixed traffic, taken in turn by each worker.
var soakTargets = []string{"verify", "refresh", "tasks_issues", "login", "myorgs"}

// soakSample is one reading of the server during the soak.
type soakSample struct {
	at         time.Duration
	rssMiB     float64
	goroutines int
	requests   uint64
	failures   uint64
}

// runSoak (-soak D) starts gatehouse on a fresh PostgreSQL database with
// its metrics listener, drives the soak targets at -c connections for D
// and logs RSS and goroutines every D/20 (at least 5 s); after a tenth of
// D for warm-up, both should stay flat.
func (b *bench) runSoak(ctx context.Context) error {
	bin, err := b.binary(ctx)
	if err != nil {
		return err
	}
	dbURL, drop, err := createDatabase(ctx, b.cfg.pgURL)
	if err != nil {
		return err
	}
	defer drop()
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	environ := append(gatehouseEnv(dbURL), "GATEHOUSE_METRICS_ADDR="+metricsAddr)
	srv, err := startServer(ctx, "gatehouse (postgres, soak)", bin, []string{"serve"}, environ, filepath.Join(b.tmp, "gatehouse-soak.log"), time.Minute)
	if err != nil {
		return err
	}
	defer srv.stop()
	setup := newClient(8, time.Minute)
	defer setup.CloseIdleConnections()
	if err := waitHealthy(ctx, setup, srv.url, 15*time.Second); err != nil {
		return err
	}
	user := &benchUser{email: "soak-" + randomHex(4) + "@example.com", password: "pw-" + randomHex(10)}
	if err := register(ctx, setup, srv.url, user); err != nil {
		return err
	}
	e := &env{client: setup, baseURL: srv.url, workers: b.cfg.conns, user: user, myOrgs: 20, db: &dbInfo{kind: "postgres", url: dbURL},
		logf: func(format string, args ...any) { b.log.Printf("soak: "+format, args...) }}
	var runners []*runner
	for _, t := range targets() {
		for _, name := range soakTargets {
			if t.name == name {
				r, err := t.setup(ctx, e)
				if err != nil {
					return err
				}
				runners = append(runners, r)
			}
		}
	}
	samples := b.soakLoad(ctx, srv, runners, "http://"+metricsAddr+"/metrics")
	b.soakReport(samples)
	return srv.died()
}

// soakLoad runs the workers and samples until -soak has passed.
func (b *bench) soakLoad(ctx context.Context, srv *server, runners []*runner, metricsURL string) []soakSample {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.soak)
	defer cancel()
	client := newClient(b.cfg.conns, b.cfg.timeout)
	var requests, failures atomic.Uint64
	var wg sync.WaitGroup
	for w := range b.cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				r := runners[i%len(runners)]
				req, err := r.request(w)
				if err != nil {
					failures.Add(1)
					continue
				}
				status, body, err := do(ctx, client, req, r.wantsBody())
				if ctx.Err() != nil {
					return
				}
				requests.Add(1)
				if err != nil || status/100 != 2 {
					failures.Add(1)
				}
				r.response(w, status, body)
			}
		}()
	}
	every := max(b.cfg.soak/20, 5*time.Second)
	start := time.Now()
	var samples []soakSample
	tick := time.NewTicker(every)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		s := soakSample{at: time.Since(start).Round(time.Second), requests: requests.Load(), failures: failures.Load()}
		if kib, err := readStatusKiB(srv.pid(), "VmRSS:"); err == nil {
			s.rssMiB = float64(kib) / 1024
		}
		s.goroutines, _ = scrapeGauge(metricsURL, "go_goroutines")
		b.log.Printf("soak: %8v  rss %6.1f MiB  goroutines %5d  requests %9d  failures %d", s.at, s.rssMiB, s.goroutines, s.requests, s.failures)
		samples = append(samples, s)
	}
	wg.Wait()
	return samples
}

// soakReport logs the figures after warm-up: first and last RSS and
// goroutines, and their peaks.
func (b *bench) soakReport(samples []soakSample) {
	warm := samples[len(samples)/10:]
	if len(warm) < 2 {
		b.log.Printf("soak: too short to judge (%d samples)", len(samples))
		return
	}
	first, last := warm[0], warm[len(warm)-1]
	var peakRSS float64
	peakG := 0
	for _, s := range warm {
		peakRSS, peakG = max(peakRSS, s.rssMiB), max(peakG, s.goroutines)
	}
	b.log.Printf("soak: after warm-up RSS %.1f → %.1f MiB (peak %.1f), goroutines %d → %d (peak %d); %d requests, %d failures",
		first.rssMiB, last.rssMiB, peakRSS, first.goroutines, last.goroutines, peakG, last.requests, last.failures)
}

// scrapeGauge reads one unlabelled gauge from a Prometheus text page.
func scrapeGauge(url, name string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no %s in %s", name, url)
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
