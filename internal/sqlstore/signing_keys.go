package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
)

// Keys is the key ring's store (keys.Store).
type Keys struct{ conn }

// Keys returns the key ring's store.
func (db *DB) Keys() *Keys { return &Keys{conn{db: db}} }

// SigningKeys implements keys.Store.
func (s *Keys) SigningKeys(ctx context.Context, now time.Time) ([]keys.Record, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT kid, alg, public_jwk, private_key, created_at, retired_at, expires_at
		FROM signing_keys WHERE expires_at IS NULL OR expires_at > $1 ORDER BY created_at, kid`, micros(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keys.Record
	for rows.Next() {
		var r keys.Record
		var created int64
		var retired, expires sql.NullInt64
		if err := rows.Scan(&r.KID, &r.Alg, &r.Public, &r.Private, &created, &retired, &expires); err != nil {
			return nil, err
		}
		r.CreatedAt, r.RetiredAt, r.ExpiresAt = fromMicros(created), fromNullMicros(retired), fromNullMicros(expires)
		out = append(out, r)
	}
	return out, rows.Err()
}

// AddSigningKey implements keys.Store: ON CONFLICT DO NOTHING on the one
// current key per alg.
func (s *Keys) AddSigningKey(ctx context.Context, r keys.Record) (bool, error) {
	n, err := changed(s.insert(ctx, s.w(), r))
	return n == 1, err
}

// RotateSigningKey implements keys.Store.
func (s *Keys) RotateSigningKey(ctx context.Context, r keys.Record, expires time.Time, also ...keys.Record) (bool, error) {
	var added bool
	err := s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `UPDATE signing_keys SET retired_at = $1, expires_at = $2 WHERE alg = $3 AND retired_at IS NULL`,
			micros(r.CreatedAt), micros(expires), r.Alg); err != nil {
			return err
		}
		for _, a := range also {
			// A keyless row (the configured secret's retirement) takes the
			// new times: earlier builds wrote it at a rotation of any algorithm.
			if _, err := c.w().ExecContext(ctx, `INSERT INTO signing_keys (kid, alg, public_jwk, private_key, created_at, retired_at, expires_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (kid) DO UPDATE SET retired_at = excluded.retired_at, expires_at = excluded.expires_at
				WHERE signing_keys.private_key = ''`,
				a.KID, a.Alg, a.Public, a.Private, micros(a.CreatedAt), nullMicros(a.RetiredAt), nullMicros(a.ExpiresAt)); err != nil {
				return err
			}
		}
		n, err := changed(s.insert(ctx, c.w(), r))
		added = n == 1
		return err
	})
	return added, err
}

func (s *Keys) insert(ctx context.Context, q querier, r keys.Record) (sql.Result, error) {
	return q.ExecContext(ctx, `INSERT INTO signing_keys (kid, alg, public_jwk, private_key, created_at, retired_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		r.KID, r.Alg, r.Public, r.Private, micros(r.CreatedAt), nullMicros(r.RetiredAt), nullMicros(r.ExpiresAt))
}
