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
	// observe counts the outcome (Config.Observer); nil: nobody.
	observe Observer
	// tracer makes each try a span (Config.Tracer); nil: none.
	tracer Tracer
}

// Tracer starts the span of one try of a job (internal/tracing).
type Tracer interface {
	Job(ctx context.Context, kind string, attempt int) (context.Context, func(outcome string, err error))
}

// Observer counts worked jobs by kind and outcome (internal/metrics):
// mail sends and webhook deliveries among them.
type Observer interface {
	Job(kind, outcome string, d time.Duration)
}

// Work runs the job and logs its outcome.
func (m *outcomeLog) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var traced func(outcome string, err error)
	if m.tracer != nil {
		ctx, traced = m.tracer.Job(ctx, job.Kind, job.Attempt)
	}
	start := time.Now()
	err := doInner(ctx)
	took := time.Since(start)
	attrs := []any{"kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts,
		"duration", took.Round(time.Millisecond).String()}
	outcome := "completed"
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		m.log.InfoContext(ctx, "job done", append(attrs, "outcome", outcome)...)
	case errors.As(err, &snooze):
		outcome = "snoozed"
		m.log.DebugContext(ctx, "job snoozed", append(attrs, "outcome", outcome, "for", snooze.Duration.String())...)
	case errors.As(err, &cancel):
		outcome = "cancelled"
		m.log.InfoContext(ctx, "job cancelled", append(attrs, "outcome", outcome, "err", err.Error())...)
	case job.Attempt < job.MaxAttempts:
		outcome = "retry"
		m.log.WarnContext(ctx, "job failed, will retry", append(attrs, "outcome", outcome, "err", err.Error())...)
	default:
		outcome = "discarded"
		m.log.ErrorContext(ctx, "job failed, discarded", append(attrs, "outcome", outcome, "err", err.Error())...)
	}
	if m.observe != nil {
		m.observe.Job(job.Kind, outcome, took)
	}
	if traced != nil {
		traced(outcome, err)
	}
	return err
}
