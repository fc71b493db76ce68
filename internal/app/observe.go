package app

import (
	"context"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/metrics"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/web"
)

// observers are the seams m fills: the kernel's and the job engine's
// (nil interfaces, not typed nils, when m is nil).
type observers struct {
	web  web.Observer
	jobs jobs.Observer
}

// observe registers the pools' and the hash queue's gauges on m and
// returns the observers to hand the kernel and the job engine.
func observe(m *metrics.Metrics, db *sqlstore.DB, hasher *password.Hasher) observers {
	if m == nil {
		return observers{}
	}
	m.DBPool(db.DB(), "writer")
	if r := db.Reader(); r != db.DB() {
		m.DBPool(r, "reader")
	}
	m.Gauge("gatehouse_password_hash_waiting", "Password hashes waiting for a slot.", func() float64 { return float64(hasher.Waiting()) })
	m.Gauges("gatehouse_job_queue_depth", "Jobs still to work, by kind and state (available, scheduled, retryable, running).", []string{"kind", "state"},
		func(ctx context.Context) ([]metrics.Sample, error) {
			counts, err := db.QueueDepth(ctx)
			out := make([]metrics.Sample, len(counts))
			for i, c := range counts {
				out[i] = metrics.Sample{Labels: []string{c.Kind, c.State}, Value: float64(c.N)}
			}
			return out, err
		})
	return observers{web: m, jobs: m}
}

// notReady is a refusal of GET /ready: msg is shown, err only logged.
func notReady(msg string, err error) error {
	return &gatehouse.Error{Kind: gatehouse.KindUnavailable, Message: msg, Err: err}
}

// ready reports whether the instance should take traffic (GET /ready):
// the database answers with every migration applied, the job workers
// run, and the password-hash queue is not full.
func (a *App) ready(ctx context.Context) error {
	if err := a.Identity.Health(ctx); err != nil {
		return notReady("database is not answering", err)
	}
	if _, pending, err := a.jobsDB.Schema(ctx); err != nil || pending {
		return notReady("database migrations are pending", err)
	}
	if a.jobs == nil || !a.jobs.Running() {
		return notReady("job workers are not running", nil)
	}
	if a.hasher.Saturated() {
		return notReady("password hashing is saturated", nil)
	}
	return nil
}
