package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// -observe N measures what metrics and traces cost (issue 29: at most 3%
// of verify and refresh): two servers of one binary on databases of their
// own, one plain and one with GATEHOUSE_METRICS_ADDR and
// GATEHOUSE_OTEL_ENDPOINT set (the default sampling; spans go to a sink in
// the bench that reads and drops them), driven in N pairs that alternate
// which side runs first, target by target. A pair's two runs are seconds
// apart, so the machine's slow drift cancels in the paired difference; the
// report is each target's mean difference and its standard error, in
// throughput and in the server's CPU per request.

// observeSide is one of the two servers of -observe.
type observeSide struct {
	name    string
	srv     *server
	runners map[string]*runner
}

// observePair is one pair's two runs of a target.
type observePair struct {
	rps, cpu [2]float64 // [off, on]: req/s and server CPU ms per request
}

func (b *bench) runObserve(ctx context.Context) error {
	bin, err := b.binary(ctx)
	if err != nil {
		return err
	}
	sink, batches, err := otlpSink()
	if err != nil {
		return err
	}
	defer sink.Close()
	for _, db := range b.cfg.dbs {
		if err := b.observeDB(ctx, bin, db, "http://"+sink.Addr, batches); err != nil {
			return fmt.Errorf("%s: %w", db, err)
		}
	}
	return nil
}

func (b *bench) observeDB(ctx context.Context, bin, db, sinkURL string, batches *atomic.Int64) error {
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	extra := [2][]string{nil, {"GATEHOUSE_METRICS_ADDR=" + metricsAddr, "GATEHOUSE_OTEL_ENDPOINT=" + sinkURL}}
	var sides [2]*observeSide
	for i, name := range []string{"off", "on"} {
		dbURL := "sqlite:" + filepath.Join(b.tmp, "observe-"+name+".db")
		if db == "postgres" {
			u, drop, err := createDatabase(ctx, b.cfg.pgURL)
			if err != nil {
				return err
			}
			defer drop()
			dbURL = u
		}
		srv, err := startServer(ctx, "gatehouse ("+db+", "+name+")", bin, []string{"serve"}, append(gatehouseEnv(dbURL), extra[i]...),
			filepath.Join(b.tmp, "gatehouse-observe-"+name+".log"), time.Minute)
		if err != nil {
			return err
		}
		defer srv.stop()
		s, err := b.observeSetup(ctx, db, name, srv)
		if err != nil {
			return err
		}
		sides[i] = s
	}
	lc := b.load(b.cfg.conns, b.cfg.duration, b.cfg.timeout)
	pairs := map[string][]observePair{}
	for n := range b.cfg.observe {
		order := []int{0, 1}
		if n%2 == 1 {
			order = []int{1, 0}
		}
		for _, name := range b.cfg.targets {
			var p observePair
			for _, i := range order {
				s := sides[i]
				if err := s.srv.died(); err != nil {
					return err
				}
				client := newClient(lc.conns, lc.timeout)
				var from cpuSample
				lc.atMeasure = func() { from = readCPU(s.srv.pid()) }
				res := runLoad(ctx, client, s.runners[name], lc)
				to := readCPU(s.srv.pid())
				client.CloseIdleConnections()
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if res.errors > 0 {
					return fmt.Errorf("%s (%s): %d errors: %v", name, s.name, res.errors, res.errSamples)
				}
				p.rps[i] = res.rps()
				p.cpu[i] = 1000 * float64(to.server-from.server) / clockTicks / float64(res.requests)
			}
			pairs[name] = append(pairs[name], p)
			b.log.Printf("%s: pair %d %s: off %.0f/s %.3f ms CPU, on %.0f/s %.3f ms CPU", db, n+1, name, p.rps[0], p.cpu[0], p.rps[1], p.cpu[1])
		}
	}
	counted, err := scrapeSum("http://"+metricsAddr+"/metrics", "gatehouse_http_requests_total")
	b.log.Printf("%s: the sink took %d span batches; the on server counted %.0f requests", db, batches.Load(), counted)
	if batches.Load() == 0 || err != nil || counted == 0 {
		return fmt.Errorf("the on server exported no spans or counted no requests (%v)", err)
	}
	for _, name := range b.cfg.targets {
		rps, cpu := pairedChange(pairs[name], func(p observePair) [2]float64 { return p.rps }),
			pairedChange(pairs[name], func(p observePair) [2]float64 { return p.cpu })
		line := fmt.Sprintf("%s on %s, %d pairs: throughput %+.1f%% ± %.1f%%, server CPU per request %+.1f%% ± %.1f%% (mean ± standard error, on against off)",
			name, db, len(pairs[name]), rps[0], rps[1], cpu[0], cpu[1])
		b.log.Print(line)
		b.rep.Notes = append(b.rep.Notes, line)
	}
	return nil
}

// observeSetup registers the bench user on s and prepares its runners.
func (b *bench) observeSetup(ctx context.Context, db, name string, srv *server) (*observeSide, error) {
	setup := newClient(8, time.Minute)
	if err := waitHealthy(ctx, setup, srv.url, 15*time.Second); err != nil {
		return nil, err
	}
	user := &benchUser{email: "observe-" + randomHex(4) + "@example.com", password: "pw-" + randomHex(10)}
	if err := register(ctx, setup, srv.url, user); err != nil {
		return nil, err
	}
	e := &env{client: setup, baseURL: srv.url, workers: b.cfg.conns, user: user, db: &dbInfo{kind: db},
		logf: func(format string, args ...any) { b.log.Printf(db+" "+name+": "+format, args...) }}
	s := &observeSide{name: name, srv: srv, runners: map[string]*runner{}}
	for _, t := range targets() {
		if slices.Contains(b.cfg.targets, t.name) {
			r, err := t.setup(ctx, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			s.runners[t.name] = r
		}
	}
	return s, nil
}

// finiteTarget reports whether the target called name uses up its work.
func finiteTarget(name string) bool {
	for _, t := range targets() {
		if t.name == name {
			return t.finite
		}
	}
	return false
}

// clockTicks is USER_HZ, the unit of /proc's CPU times on Linux.
const clockTicks = 100

// scrapeSum adds up every series of the metric name on a Prometheus text
// page.
func scrapeSum(url, name string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			sum += f
		}
	}
	return sum, sc.Err()
}

// pairedChange is the mean and the standard error of the pairs' relative
// change from off to on, in percent, of the figure f picks.
func pairedChange(ps []observePair, f func(observePair) [2]float64) [2]float64 {
	var d []float64
	for _, p := range ps {
		v := f(p)
		if v[0] > 0 {
			d = append(d, 100*(v[1]-v[0])/v[0])
		}
	}
	if len(d) < 2 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	var mean float64
	for _, x := range d {
		mean += x
	}
	mean /= float64(len(d))
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	return [2]float64{mean, math.Sqrt(ss/float64(len(d)-1)) / math.Sqrt(float64(len(d)))}
}

// otlpSink serves OTLP/HTTP trace exports on loopback: it reads each
// batch and answers an empty success, as a collector would, and counts
// the batches.
func otlpSink() (*http.Server, *atomic.Int64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	var n atomic.Int64
	srv := &http.Server{Addr: ln.Addr().String(), ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n.Add(1)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK)
		})}
	go srv.Serve(ln)
	return srv, &n, nil
}
