package sqlstore

import (
	"context"
	"database/sql"
)

// Tracer starts the span of one statement or transaction
// (internal/tracing); the statement's text has placeholders, never values.
type Tracer interface {
	Query(ctx context.Context, system, statement string) (context.Context, func(error))
}

// WithTracer returns a view of db whose statements and transactions are
// spans of t (nil: none). The view shares db's pools.
func (db *DB) WithTracer(t Tracer) *DB {
	v := *db
	v.tracer = t
	return &v
}

// traced is a querier whose calls are spans.
type traced struct {
	q      querier
	t      Tracer
	system string
}

func (q traced) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, end := q.t.Query(ctx, q.system, query)
	res, err := q.q.ExecContext(ctx, query, args...)
	end(err)
	return res, err
}

func (q traced) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, end := q.t.Query(ctx, q.system, query)
	rows, err := q.q.QueryContext(ctx, query, args...)
	end(err)
	return rows, err
}

func (q traced) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx, end := q.t.Query(ctx, q.system, query)
	row := q.q.QueryRowContext(ctx, query, args...)
	end(row.Err())
	return row
}

// trace wraps q when db traces.
func (db *DB) trace(q querier) querier {
	if db.tracer == nil {
		return q
	}
	return traced{q, db.tracer, db.dialect.name}
}
