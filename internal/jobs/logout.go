package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/oauth"
)

// logoutTimeout bounds one try of a back-channel logout (its own HTTP
// timeout, oauth.LogoutTimeout, ends first).
const logoutTimeout = 15 * time.Second

// LogoutDeliverer sends one logout token (oauth.Server).
type LogoutDeliverer interface {
	DeliverLogout(ctx context.Context, j oauth.LogoutJob) error
}

// logoutWorker sends back-channel logouts (Back-Channel Logout 1.0): a
// failed try is retried after the next of delays (the last repeats) until
// the job's attempts (oauth.LogoutAttempts) run out.
type logoutWorker struct {
	river.WorkerDefaults[oauth.LogoutJob]
	svc    LogoutDeliverer
	delays []time.Duration
}

// Work makes one try.
func (w *logoutWorker) Work(ctx context.Context, job *river.Job[oauth.LogoutJob]) error {
	return w.svc.DeliverLogout(ctx, job.Args)
}

// NextRetry waits the delay of the attempt that failed.
func (w *logoutWorker) NextRetry(job *river.Job[oauth.LogoutJob]) time.Time {
	k := min(max(job.Attempt-1, 0), len(w.delays)-1)
	return time.Now().Add(w.delays[k])
}

// Timeout bounds one try.
func (w *logoutWorker) Timeout(*river.Job[oauth.LogoutJob]) time.Duration { return logoutTimeout }
