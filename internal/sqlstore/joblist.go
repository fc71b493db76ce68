package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobFilter chooses the jobs ListJobs returns; zero fields choose all.
type JobFilter struct {
	State string // a River job state: available, retryable, discarded, …
	Kind  string
	Limit int // at most this many, newest first; 0: 100
}

// Job is one job of the queue as an operator sees it: never its args,
// which may carry mail bodies or webhook payloads.
type Job struct {
	ID          int64
	Kind, State string
	Queue       string
	Attempt     int
	MaxAttempts int
	ScheduledAt time.Time
	AttemptedAt *time.Time
	// LastError is the first line of the last attempt's error.
	LastError string
}

// JobCount is how many jobs of one kind are in one state.
type JobCount struct {
	Kind, State string
	N           int
}

// ListJobs lists the jobs of every queue that f chooses, newest first.
func (db *DB) ListJobs(ctx context.Context, f JobFilter) ([]Job, error) {
	p := river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	p = p.First(limit)
	if f.State != "" {
		p = p.States(rivertype.JobState(f.State))
	}
	if f.Kind != "" {
		p = p.Kinds(f.Kind)
	}
	res, err := db.jobs.JobList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]Job, len(res.Jobs))
	for i, j := range res.Jobs {
		out[i] = Job{ID: j.ID, Kind: j.Kind, State: string(j.State), Queue: j.Queue, Attempt: j.Attempt,
			MaxAttempts: j.MaxAttempts, ScheduledAt: j.ScheduledAt, AttemptedAt: j.AttemptedAt}
		if n := len(j.Errors); n > 0 {
			out[i].LastError, _, _ = strings.Cut(j.Errors[n-1].Error, "\n")
		}
	}
	return out, nil
}

// CountJobs counts the jobs of every queue by kind and state.
func (db *DB) CountJobs(ctx context.Context) ([]JobCount, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM river_job GROUP BY kind, state ORDER BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	var out []JobCount
	for rows.Next() {
		var c JobCount
		if err := rows.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// JobStates are the states a job can be in, for checking a filter.
var JobStates = []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}

// QueueDepth counts the jobs still to work (available, scheduled,
// retryable, running) by kind and state: the metrics' queue depth.
func (db *DB) QueueDepth(ctx context.Context) ([]JobCount, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	defer rows.Close()
	var out []JobCount
	for rows.Next() {
		var c JobCount
		if err := rows.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("queue depth: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
