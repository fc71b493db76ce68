package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// Limits is the store of the abuse limits a deployment's instances share
// (ratelimit.Store): one statement per take, on the writer pool.
type Limits struct{ conn }

// Limits returns the shared rate-limit store.
func (db *DB) Limits() *Limits { return &Limits{conn{db: db}} }

var _ ratelimit.Store = (*Limits)(nil)

// TakeLimit implements ratelimit.Store: one upsert moves tat on by every
// unless that passes limit, atomically, so concurrent takes on every
// instance are counted once each; a refused take writes nothing and reads
// the row for the wait.
func (s *Limits) TakeLimit(ctx context.Context, key string, now, limit time.Time, every time.Duration) (time.Time, bool, error) {
	var tat int64
	err := s.w().QueryRowContext(ctx, `INSERT INTO rate_limits (key, tat) VALUES ($1, $3)
		ON CONFLICT (key) DO UPDATE SET tat = CASE WHEN rate_limits.tat > $2 THEN rate_limits.tat + $4 ELSE $3 END
		WHERE CASE WHEN rate_limits.tat > $2 THEN rate_limits.tat + $4 ELSE $3 END <= $5
		RETURNING tat`, key, micros(now), micros(now.Add(every)), every.Microseconds(), micros(limit)).Scan(&tat)
	if err == nil {
		return fromMicros(tat), true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, s.db.dialect.translate(err)
	}
	at, err := s.LimitTAT(ctx, key)
	return at, false, err
}

// LimitTAT implements ratelimit.Store.
func (s *Limits) LimitTAT(ctx context.Context, key string) (time.Time, error) {
	var tat int64
	err := s.w().QueryRowContext(ctx, `SELECT tat FROM rate_limits WHERE key = $1`, key).Scan(&tat)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, s.db.dialect.translate(err)
	}
	return fromMicros(tat), nil
}

// ResetLimit implements ratelimit.Store.
func (s *Limits) ResetLimit(ctx context.Context, key string) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM rate_limits WHERE key = $1`, key)
	return err
}

// Prune deletes the buckets full again by now (their tat has passed):
// they mean what no row means.
func (s *Limits) Prune(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.w().ExecContext(ctx, `DELETE FROM rate_limits WHERE tat <= $1`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
