package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// deliveryWorker works webhook deliveries (spec section 6): one try per
// attempt, the tool's waits between them, then the delivery is dropped.
type deliveryWorker struct {
	river.WorkerDefaults[webhooks.Delivery]
	svc  *webhooks.Service
	seal *seal.Box // opens the bodies the store sealed
}

// Work makes one try; a deleted webhook cancels the delivery and the
// retries it had left; one whose workspace or receiver is at its limit of
// deliveries in flight is snoozed (no try counted): shortly while they
// are moving, longer and longer while its receiver holds them.
func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[webhooks.Delivery]) error {
	d := job.Args
	if err := d.Open(w.seal); err != nil {
		return river.JobCancel(err)
	}
	err := w.svc.Deliver(ctx, &d, job.Attempt)
	switch {
	case errors.Is(err, webhooks.ErrGone):
		return river.JobCancel(err)
	case errors.Is(err, webhooks.ErrBusy):
		return river.JobSnooze(snoozeFor(snoozesOf(job.Metadata)))
	case errors.Is(err, webhooks.ErrMoving):
		return river.JobSnooze(movingSnooze/2 + rand.N(movingSnooze))
	}
	return err
}

// movingSnooze is about how long a delivery waits whose workspace and
// receiver are at their limit but moving: as long as a few deliveries.
const movingSnooze = 100 * time.Millisecond

// snoozeFor is how long a delivery at its limit waits after its snoozes
// so far: 200 ms doubling up to 30 s, half of it random, so that a
// workspace's backlog to a receiver that never answers is looked at less
// and less often and the deliveries of others come first.
func snoozeFor(snoozes int) time.Duration {
	d := min(200*time.Millisecond<<min(snoozes, 8), 30*time.Second)
	return d/2 + rand.N(d/2)
}

// snoozesOf reads how many times River has snoozed the job (its
// metadata's "snoozes").
func snoozesOf(metadata []byte) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	json.Unmarshal(metadata, &m)
	return m.Snoozes
}

// NextRetry follows the tool's schedule: Links ≈1 s then ≈5 s, Sign 5 s
// then 20 s.
func (w *deliveryWorker) NextRetry(job *river.Job[webhooks.Delivery]) time.Time {
	return time.Now().Add(w.svc.RetryDelay(&job.Args, job.Attempt))
}

// deliveryTimeout leaves the delivery's own 10 s HTTP timeout room to
// end first.
const deliveryTimeout = 15 * time.Second

// Timeout bounds one try.
func (w *deliveryWorker) Timeout(*river.Job[webhooks.Delivery]) time.Duration {
	return deliveryTimeout
}

// scheduled is the job of one run of a Schedule.
type scheduled struct {
	Name string `json:"name"`
}

// Kind names periodic runs in the queue.
func (scheduled) Kind() string { return "schedule" }

// scheduleWorker runs the Schedules by name.
type scheduleWorker struct {
	river.WorkerDefaults[scheduled]
	runs map[string]func(context.Context) error
}

// Work runs the schedule named by the job; one no longer configured is
// dropped.
func (w *scheduleWorker) Work(ctx context.Context, job *river.Job[scheduled]) error {
	run := w.runs[job.Args.Name]
	if run == nil {
		return river.JobCancel(fmt.Errorf("no schedule %q", job.Args.Name))
	}
	return run(ctx)
}
