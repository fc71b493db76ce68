package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// jobNames are the opt-in measurements of background work (-jobs). Each
// starts its own gatehouse on a fresh database, with the settings it needs
// (a webhook CA, an SMTP server), so they are not targets of the shared
// server and the default run does not include them.
var jobNames = []string{"fanout", "mail", "magic", "starve"}

// jobRow is what one background-work measurement found.
type jobRow struct {
	Job     string  `json:"job"` // fanout, mail (smtp), mail (log)
	DB      string  `json:"db"`
	Conns   int     `json:"conns"`
	Seconds float64 `json:"seconds"` // the load window
	// Requests are the 200s of the driving calls (link creations,
	// registrations) in the window; Done the deliveries or mails that
	// arrived for them, DonePerSec over the window.
	Requests     uint64  `json:"requests"`
	RequestsPS   float64 `json:"requests_per_sec"`
	Errors       uint64  `json:"errors"`
	Done         int     `json:"done"`
	DonePerSec   float64 `json:"done_per_sec"`
	DrainSeconds float64 `json:"drain_seconds"` // after the window, until all arrived (or gave up)
	Missing      int     `json:"missing"`       // never arrived
	// SustainedPS is everything delivered over the time from the start
	// of the window to the last delivery (fanout).
	SustainedPS float64 `json:"sustained_per_sec,omitempty"`
	// ReceiverConns are the connections the server opened to the
	// receiver (fanout): far fewer than deliveries means kept-alive.
	ReceiverConns int     `json:"receiver_connections,omitempty"`
	P50MS         float64 `json:"p50_ms,omitempty"`
	P99MS         float64 `json:"p99_ms,omitempty"`
	// LogProblems are the server's error, warning and lock lines over
	// the whole job, setup included; LogSamples a few of them.
	LogProblems int      `json:"log_problems"`
	LogSamples  []string `json:"log_samples,omitempty"`
	// River is the jobs' own timings (fanout).
	River *jobTimings `json:"river,omitempty"`
	// Backlog is the webhook deliveries queued when the sign-in links
	// were asked for, TarpitConns the connections the receiver that never
	// answers took (starve).
	Backlog     int `json:"webhook_backlog,omitempty"`
	TarpitConns int `json:"tarpit_connections,omitempty"`
}

func (j jobRow) text() string {
	s := fmt.Sprintf("%s (%s): %.1f s window: %d requests = %.1f/s (%d errors)", j.Job, j.DB, j.Seconds, j.Requests, j.RequestsPS, j.Errors)
	if strings.HasSuffix(j.Job, " (log)") {
		return s + "; mail written to the log"
	}
	s += fmt.Sprintf("; %d arrived in the window = %.1f/s; all arrived %.2f s after it", j.Done, j.DonePerSec, j.DrainSeconds)
	if j.Missing > 0 {
		s += fmt.Sprintf(", %d NEVER ARRIVED", j.Missing)
	}
	if j.SustainedPS > 0 {
		s += fmt.Sprintf(" (%.1f/s sustained, start to last delivery)", j.SustainedPS)
	}
	if j.ReceiverConns > 0 {
		s += fmt.Sprintf("; %d connections to the receiver", j.ReceiverConns)
	}
	if j.Job == "starve" {
		s += fmt.Sprintf("; behind %d webhook deliveries queued to a tarpit (%d connections): request-to-mail p50 %s, p99 %s",
			j.Backlog, j.TarpitConns, fmtMS(j.P50MS), fmtMS(j.P99MS))
	} else if j.P50MS > 0 || j.P99MS > 0 {
		s += fmt.Sprintf("; commit-to-delivery p50 %s, p99 %s", fmtMS(j.P50MS), fmtMS(j.P99MS))
	}
	return s + j.River.text()
}

// jobProblems lists the jobs' failed requests, undelivered work and
// server log problems.
func (r *report) jobProblems() []string {
	var problems []string
	for _, j := range r.Jobs {
		if j.Errors > 0 {
			problems = append(problems, fmt.Sprintf("%s on %s: %d requests failed", j.Job, j.DB, j.Errors))
		}
		if j.Missing > 0 {
			problems = append(problems, fmt.Sprintf("%s on %s: %d never arrived", j.Job, j.DB, j.Missing))
		}
		if j.LogProblems > 0 {
			problems = append(problems, fmt.Sprintf("%s on %s: %d server log lines look like problems, e.g.\n      %s",
				j.Job, j.DB, j.LogProblems, strings.Join(j.LogSamples, "\n      ")))
		}
	}
	return problems
}

// addJob reports row with the problems in srv's log so far.
func (b *bench) addJob(row jobRow, srv *server) {
	row.Conns = b.cfg.conns
	_, row.LogProblems, row.LogSamples = srv.logs.since(logCounts{})
	b.rep.Jobs = append(b.rep.Jobs, row)
	b.log.Print(row.text())
}

func (c *config) wantsJob(name string) bool { return slices.Contains(c.jobs, name) }

func validateJobs(c *config, check func(bool, string, ...any)) {
	for _, j := range c.jobs {
		check(!slices.Contains(jobNames, j), "unknown job %q (want %s)", j, strings.Join(jobNames, ", "))
	}
	check(len(c.jobs) > 0 && c.url != "", "-jobs starts its own servers: not with -url")
}

// jobServer is a gatehouse started for one job measurement.
type jobServer struct {
	srv    *server
	client *http.Client
	url    string
	user   *benchUser
	db     string // sqlite or postgres
	dbURL  string
}

// startJobServer creates a fresh database of kind db, starts gatehouse on
// it with extra settings, waits for it and registers the bench user. stop
// ends the server and drops the database.
func (b *bench) startJobServer(ctx context.Context, bin, db, name string, extra []string) (*jobServer, func(), error) {
	var dbURL string
	drop := func() error { return nil }
	switch db {
	case "sqlite":
		dbURL = "sqlite:" + filepath.Join(b.tmp, "jobs-"+name+"-"+randomHex(3)+".db")
	case "postgres":
		u, d, err := createDatabase(ctx, b.cfg.pgURL)
		if err != nil {
			return nil, nil, err
		}
		dbURL, drop = u, d
	}
	b.log.Printf("%s: %s: starting gatehouse", db, name)
	srv, err := startServer(ctx, "gatehouse ("+db+", "+name+")", bin, []string{"serve"}, append(gatehouseEnv(dbURL), extra...),
		filepath.Join(b.tmp, "gatehouse-"+db+"-"+name+".log"), time.Minute)
	if err != nil {
		drop()
		return nil, nil, err
	}
	client := newClient(8, time.Minute)
	stop := func() {
		client.CloseIdleConnections()
		srv.stop()
		if err := drop(); err != nil {
			b.log.Printf("%s: %v", db, err)
		}
	}
	js := &jobServer{srv: srv, client: client, url: srv.url, db: db, dbURL: dbURL,
		user: &benchUser{email: "bench-" + randomHex(4) + "@example.com", password: "pw-" + randomHex(10)}}
	if err := waitHealthy(ctx, client, srv.url, 15*time.Second); err != nil {
		stop()
		return nil, nil, err
	}
	if err := register(ctx, client, srv.url, js.user); err != nil {
		stop()
		return nil, nil, err
	}
	return js, stop, nil
}

// runJobs runs every wanted job measurement on database db.
func (b *bench) runJobs(ctx context.Context, bin, db string) error {
	var errs []error
	if b.cfg.wantsJob("fanout") && ctx.Err() == nil {
		if err := b.runFanout(ctx, bin, db); err != nil {
			errs = append(errs, fmt.Errorf("fanout on %s: %w", db, err))
		}
	}
	if b.cfg.wantsJob("mail") && ctx.Err() == nil {
		if err := b.runMail(ctx, bin, db); err != nil {
			errs = append(errs, fmt.Errorf("mail on %s: %w", db, err))
		}
	}
	if b.cfg.wantsJob("magic") && ctx.Err() == nil {
		if err := b.runMagicMail(ctx, bin, db); err != nil {
			errs = append(errs, fmt.Errorf("magic on %s: %w", db, err))
		}
	}
	if b.cfg.wantsJob("starve") && ctx.Err() == nil {
		if err := b.runStarve(ctx, bin, db); err != nil {
			errs = append(errs, fmt.Errorf("starve on %s: %w", db, err))
		}
	}
	for _, e := range errs {
		b.rep.Failures = append(b.rep.Failures, e.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d job measurement(s) failed", len(errs))
	}
	return nil
}

// waitArrived polls done until it reaches want or within passes, and
// returns how long that took.
func waitArrived(ctx context.Context, done func() int, want int, within time.Duration) time.Duration {
	start := time.Now()
	for done() < want && time.Since(start) < within && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}
