package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/mail"
)

// mailTimeout bounds one try of a message (the sender's own SMTP timeout,
// 10 s by default, ends first).
const mailTimeout = 30 * time.Second

// mailWorker sends queued mail: it opens the sealed message and hands it
// to the sender; a failure is retried after the next of delays (the last
// repeats) until the job's attempts run out, when outcomeLog's one
// "discarded" line is all that is left of it.
type mailWorker struct {
	river.WorkerDefaults[mail.Job]
	sender mail.Sender
	sealer *mail.Sealer
	delays []time.Duration
}

// Work makes one try. A message that does not open (altered, or sealed
// under another encryption key) never will: the job is cancelled.
func (w *mailWorker) Work(ctx context.Context, job *river.Job[mail.Job]) error {
	m, err := w.sealer.Open(job.Args)
	if err != nil {
		return river.JobCancel(err)
	}
	return w.sender.Send(ctx, m)
}

// NextRetry waits the delay of the attempt that failed.
func (w *mailWorker) NextRetry(job *river.Job[mail.Job]) time.Time {
	k := min(max(job.Attempt-1, 0), len(w.delays)-1)
	return time.Now().Add(w.delays[k])
}

// Timeout bounds one try.
func (w *mailWorker) Timeout(*river.Job[mail.Job]) time.Duration { return mailTimeout }
