package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/internal/revocation"
)

// OnRevoke returns a view of db that calls fn with the revocations a
// transaction recorded after it commits: the instance's revocation list
// adds them at once, without a read, instead of at its next poll.
func (db *DB) OnRevoke(fn func(ctx context.Context, es []revocation.Entry)) *DB {
	v := *db
	v.revoked = fn
	return &v
}

// Revocations is the source of the revocation list.
type Revocations struct{ conn }

// Revocations returns the revocations store.
func (db *DB) Revocations() *Revocations { return &Revocations{conn{db: db}} }

// RevokedSince implements revocation.Source.
func (s *Revocations) RevokedSince(ctx context.Context, since time.Time) ([]revocation.Entry, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT kind, subject, org_id, at FROM revocations WHERE at >= $1`, micros(since))
	if err != nil {
		return nil, err
	}
	return scanRevocations(rows)
}

// Prune deletes the revocations recorded before before.
func (s *Revocations) Prune(ctx context.Context, before time.Time) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM revocations WHERE at < $1`, micros(before)))
}

// revoke runs write and records, in the same transaction, the revocation
// of what query (a SELECT of subject and org_id, before write changes
// them) names as kind. Every revoking write goes through it, so none can
// leave a token working. The INSERT returns what it recorded, which the
// transaction hands to OnRevoke's fn once committed.
func (c conn) revoke(ctx context.Context, kind string, at time.Time, query string, args []any, write func(c conn) error) error {
	return c.inTx(ctx, func(c conn) error {
		n := len(args)
		rows, err := c.w().QueryContext(ctx, `INSERT INTO revocations (kind, subject, org_id, at) SELECT CAST($`+strconv.Itoa(n+1)+` AS TEXT), subject, org_id, CAST($`+
			strconv.Itoa(n+2)+` AS BIGINT) FROM (`+query+`) q RETURNING kind, subject, org_id, at`, append(args, kind, micros(at))...)
		if err != nil {
			return err
		}
		es, err := scanRevocations(rows)
		if err != nil {
			return err
		}
		*c.revoked = append(*c.revoked, es...)
		if err := c.queueLogouts(ctx, es, at); err != nil {
			return err
		}
		return write(c)
	})
}

// scanRevocations reads and closes rows of kind, subject, org_id, at.
func scanRevocations(rows *sql.Rows) ([]revocation.Entry, error) {
	defer rows.Close()
	var out []revocation.Entry
	for rows.Next() {
		var e revocation.Entry
		var at int64
		if err := rows.Scan(&e.Kind, &e.Subject, &e.OrgID, &at); err != nil {
			return nil, err
		}
		e.At = fromMicros(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
