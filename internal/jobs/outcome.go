package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// outcomeLog logs every job's outcome: its kind, id, attempt, duration
// and what became of it (completed, retry, discarded, cancelled), with the
// error our worker returned. Never the args: they hold mail bodies and
// webhook payloads. Workers' errors must carry no secret either (the
// webhook worker's name no URL, secret or body).
type outcomeLog struct {
	river.MiddlewareDefaults
	log *slog.Logger
}

// Work runs the job and logs its outcome.
func (m *outcomeLog) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	err := doInner(ctx)
	attrs := []any{"kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts,
		"duration", time.Since(start).Round(time.Millisecond).String()}
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		m.log.Info("job done", append(attrs, "outcome", "completed")...)
	case errors.As(err, &snooze):
		m.log.Debug("job snoozed", append(attrs, "outcome", "snoozed", "for", snooze.Duration.String())...)
	case errors.As(err, &cancel):
		m.log.Info("job cancelled", append(attrs, "outcome", "cancelled", "err", err.Error())...)
	case job.Attempt < job.MaxAttempts:
		m.log.Warn("job failed, will retry", append(attrs, "outcome", "retry", "err", err.Error())...)
	default:
		m.log.Error("job failed, discarded", append(attrs, "outcome", "discarded", "err", err.Error())...)
	}
	return err
}
