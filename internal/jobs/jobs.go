// Package jobs runs Gatehouse's background work on River, a job queue kept
// in our own database: on SQLite through River's SQLite driver on the
// single writer, on PostgreSQL through its pgx driver on a pool of its own,
// shared with every other instance on that database. The stores insert
// jobs in the transaction of the change that causes them (sqlstore);
// this package works them: its workers turn a job into a call on a domain
// service, and its schedules run periodic work once per period across all
// instances (River elects one leader to enqueue them). No domain package
// imports River.
package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// Timing of the engine, decided in docs/decisions.md.
const (
	// JobTimeout bounds a job that names no timeout of its own.
	JobTimeout = 30 * time.Second
	// RescueStuckJobsAfter is by default when a job still "running" is
	// taken for lost (its instance died) and run again; well above every
	// job's timeout, so a job still at work is never run twice at once.
	RescueStuckJobsAfter = 2 * time.Minute
	// MinRescueAfter is the shortest rescue window accepted: twice the
	// longest timeout of any job (JobTimeout, mailTimeout).
	MinRescueAfter = 2 * max(JobTimeout, mailTimeout, deliveryTimeout, logoutTimeout)
	// pollInterval is how often an instance looks for jobs whose time has
	// come (retries); new jobs wake it at once.
	pollInterval = 200 * time.Millisecond
	// maxWorkers is how many jobs an instance works at once. Each River
	// fetch takes at most the free slots: under webhook fan-out on
	// PostgreSQL, 50 workers sat idle between fetches while deliveries
	// queued (p50 260-560 ms); 100 kept p50 under 100 ms (BENCHMARKS.md).
	maxWorkers = 100
	// MaxMailSends is how many mails an instance sends at once, each on
	// its own SMTP connection: the workers of the mail queue, apart from
	// maxWorkers so that no volume of webhook deliveries holds them; as
	// many as the shared workers were before they were raised to 100,
	// and what Postfix accepts from one client by default
	// (smtpd_client_connection_count_limit 50).
	MaxMailSends = 50
	pgPoolSize   = 6
)

// Schedule is periodic work: Run is called every Every, on one instance.
type Schedule struct {
	Name  string // unique: the periodic job's id
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Config wires an Engine.
type Config struct {
	// DB's queues are the ones worked: DB.Queue (webhook deliveries,
	// schedules) and DB.MailQueue (mail), each with workers of its own.
	DB     *sqlstore.DB
	Logger *slog.Logger
	// Webhooks delivers webhook events; nil: none are worked. WebhookSeal
	// opens their bodies, sealed in the queue (sqlstore.DB.WithWebhookSeal).
	Webhooks    *webhooks.Service
	WebhookSeal *seal.Box
	// Mail sends the queued mail, opened by MailSealer; nil: none is
	// worked. MailRetryDelays are the waits between tries (the last
	// repeats); nil: mail.RetryDelays.
	Mail            mail.Sender
	MailSealer      *mail.Sealer
	MailRetryDelays []time.Duration
	Schedules       []Schedule
	// Logouts sends back-channel logout tokens; nil: none are worked.
	// LogoutRetryDelays are the waits between tries (the last repeats);
	// nil: oauth.LogoutRetryDelays.
	Logouts           LogoutDeliverer
	LogoutRetryDelays []time.Duration
	// PollInterval overrides how often due retries are looked for (tests).
	PollInterval time.Duration
	// RescueAfter is when a job still "running" is taken for lost; 0:
	// RescueStuckJobsAfter. At least MinRescueAfter.
	RescueAfter time.Duration
	// Observer counts each job's outcome (internal/metrics); nil: nobody.
	Observer Observer
	// Tracer makes each try of a job a span (internal/tracing); nil: none.
	Tracer Tracer
}

// client is what the engine needs of a River client of either driver.
type client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Stopped() <-chan struct{}
}

// Engine works the queue of one instance.
type Engine struct {
	client client
	pool   *pgxpool.Pool // PostgreSQL: River's own pool
	log    *slog.Logger
	// started is set once Start succeeded (Running).
	started atomic.Bool
}

// New builds the engine on cfg.DB; Start starts it.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	rc, err := riverConfig(cfg, log)
	if err != nil {
		return nil, err
	}
	e := &Engine{log: log}
	switch cfg.DB.Dialect() {
	case "sqlite":
		// River shares the single writer: a second writer connection
		// would fight ours for the file lock.
		e.client, err = river.NewClient(riversqlite.New(cfg.DB.DB()), rc)
	default:
		if e.pool, err = newPool(ctx, cfg.DB.URL()); err != nil {
			return nil, err
		}
		e.client, err = river.NewClient(riverpgxv5.New(e.pool), rc)
	}
	if err != nil {
		e.closePool()
		return nil, fmt.Errorf("job engine: %w", err)
	}
	return e, nil
}

// newPool opens River's PostgreSQL pool: it holds one LISTEN connection
// (new jobs wake the instance) and fetches and completes jobs.
func newPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("job engine pool: %w", err)
	}
	pc.MaxConns = pgPoolSize
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("job engine pool: %w", err)
	}
	return pool, nil
}

func riverConfig(cfg Config, log *slog.Logger) (*river.Config, error) {
	workers := river.NewWorkers()
	if cfg.Webhooks != nil {
		if err := river.AddWorkerSafely(workers, &deliveryWorker{svc: cfg.Webhooks, seal: cfg.WebhookSeal}); err != nil {
			return nil, err
		}
	}
	if cfg.Mail != nil {
		delays := cfg.MailRetryDelays
		if len(delays) == 0 {
			delays = mail.RetryDelays
		}
		mw := &mailWorker{sender: cfg.Mail, sealer: cfg.MailSealer, delays: delays}
		if err := river.AddWorkerSafely(workers, mw); err != nil {
			return nil, err
		}
	}
	if cfg.Logouts != nil {
		delays := cfg.LogoutRetryDelays
		if len(delays) == 0 {
			delays = oauth.LogoutRetryDelays
		}
		if err := river.AddWorkerSafely(workers, &logoutWorker{svc: cfg.Logouts, delays: delays}); err != nil {
			return nil, err
		}
	}
	queue := cfg.DB.Queue()
	sw := &scheduleWorker{runs: map[string]func(context.Context) error{}}
	var periodic []*river.PeriodicJob
	for _, s := range cfg.Schedules {
		sw.runs[s.Name] = s.Run
		args := scheduled{Name: s.Name}
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(s.Every),
			func() (river.JobArgs, *river.InsertOpts) {
				return args, &river.InsertOpts{Queue: queue, MaxAttempts: 1}
			},
			&river.PeriodicJobOpts{ID: s.Name}))
	}
	if err := river.AddWorkerSafely(workers, sw); err != nil {
		return nil, err
	}
	poll := cmp.Or(cfg.PollInterval, pollInterval)
	rescue := cmp.Or(cfg.RescueAfter, RescueStuckJobsAfter)
	if rescue < MinRescueAfter {
		return nil, fmt.Errorf("job engine: rescue window %s is under %s, twice the longest job timeout", rescue, MinRescueAfter)
	}
	return &river.Config{
		Queues: map[string]river.QueueConfig{queue: {MaxWorkers: maxWorkers},
			cfg.DB.MailQueue(): {MaxWorkers: MaxMailSends}},
		Workers:              workers,
		PeriodicJobs:         periodic,
		Middleware:           []rivertype.Middleware{&outcomeLog{log: log, observe: cfg.Observer, tracer: cfg.Tracer}},
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: rescue,
		FetchCooldown:        20 * time.Millisecond,
		FetchPollInterval:    poll,
		// River reports at info level every start and stop; ours are
		// enough.
		Logger: slog.New(atLeast{slog.LevelWarn, log.Handler()}),
	}, nil
}

// Start starts working the queue. Only Stop ends the work: a cancelled ctx
// does not.
func (e *Engine) Start(ctx context.Context) error {
	if err := e.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start job engine: %w", err)
	}
	e.started.Store(true)
	return nil
}

// Running reports whether the workers are working the queue: started and
// not stopped since.
func (e *Engine) Running() bool {
	if !e.started.Load() {
		return false
	}
	select {
	case <-e.client.Stopped():
		return false
	default:
		return true
	}
}

// Stop stops fetching jobs and waits for the running ones until ctx ends;
// then it cancels them (they run again later on some instance). Jobs not
// started stay queued in the database.
func (e *Engine) Stop(ctx context.Context) error {
	err := e.client.Stop(ctx)
	if err != nil {
		e.log.Warn("jobs still running at the shutdown deadline: cancelled", "err", err)
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = errors.Join(err, e.client.StopAndCancel(hard))
	}
	e.closePool()
	return err
}

func (e *Engine) closePool() {
	if e.pool != nil {
		e.pool.Close()
	}
}

// atLeast passes on the records of level min and above.
type atLeast struct {
	min slog.Level
	slog.Handler
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.min, h.Handler.WithAttrs(as)}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.min, h.Handler.WithGroup(name)}
}
