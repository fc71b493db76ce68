package main

import (
	"context"
	"fmt"
	"time"
)

// jobTimings are River's own times of the jobs of one kind after a run:
// Wait from insert to the start of the last try (attempted_at -
// created_at: time queued), Work from that start to the end
// (finalized_at - attempted_at).
type jobTimings struct {
	WaitP50MS float64 `json:"queue_wait_p50_ms"`
	WaitP99MS float64 `json:"queue_wait_p99_ms"`
	WorkP50MS float64 `json:"work_p50_ms"`
	WorkP99MS float64 `json:"work_p99_ms"`
}

func (t *jobTimings) text() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("; River: queued p50 %s p99 %s, worked p50 %s p99 %s",
		fmtMS(t.WaitP50MS), fmtMS(t.WaitP99MS), fmtMS(t.WorkP50MS), fmtMS(t.WorkP99MS))
}

// readJobTimings reads the timings of the finished jobs of kind in the
// database of js.
func readJobTimings(ctx context.Context, js *jobServer, kind string) (*jobTimings, error) {
	db, err := openSeedDB(ctx, &dbInfo{kind: js.db, url: js.dbURL})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// Milliseconds, in each dialect.
	q := `SELECT (julianday(attempted_at) - julianday(created_at)) * 86400000.0,
		(julianday(finalized_at) - julianday(attempted_at)) * 86400000.0
		FROM river_job WHERE kind = $1 AND finalized_at IS NOT NULL`
	if js.db == "postgres" {
		q = `SELECT extract(epoch FROM attempted_at - created_at)::float8 * 1000,
			extract(epoch FROM finalized_at - attempted_at)::float8 * 1000
			FROM river_job WHERE kind = $1 AND finalized_at IS NOT NULL`
	}
	wait, work := newHistogram(), newHistogram()
	add := func(a, b float64) {
		wait.record(time.Duration(a * float64(time.Millisecond)))
		work.record(time.Duration(b * float64(time.Millisecond)))
	}
	var rows interface {
		Next() bool
		Scan(...any) error
		Err() error
	}
	if db.pg != nil {
		r, err := db.pg.Query(ctx, q, kind)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		rows = r
	} else {
		r, err := db.sq.QueryContext(ctx, q, kind)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		rows = r
	}
	for rows.Next() {
		var a, b float64
		if err := rows.Scan(&a, &b); err != nil {
			return nil, err
		}
		add(a, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return &jobTimings{WaitP50MS: ms(wait.percentile(50)), WaitP99MS: ms(wait.percentile(99)),
		WorkP50MS: ms(work.percentile(50)), WorkP99MS: ms(work.percentile(99))}, nil
}
