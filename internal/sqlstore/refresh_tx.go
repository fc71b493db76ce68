package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// rotateOne is refreshMany's check and rotation of one sign-in session on
// SQLite ($1 session, $2 presented hash, $3 successor's hash, $4 time, $5
// idle, $6 absolute, in microseconds): the same conditions and the same
// new expiry, and the conditional UPDATE lets one caller through.
const rotateOne = `UPDATE sessions SET refresh_hash = $3, last_used_at = $4, expires_at = MIN($4 + $5, created_at + $6)
	WHERE id = $1 AND refresh_hash = $2 AND revoked_at IS NULL AND grant_id IS NULL AND NOT mfa_pending
		AND expires_at > $4 AND created_at + $6 > $4`

// refreshTx is refreshBatch on SQLite: every call's rotation, history row
// and read in one write transaction, so the refreshes that queued together
// share its BEGIN, its commit and the commit's WAL sync, and each is
// answered (by the batches) only once that commit is durable. A token the
// history holds already fails the INSERT, and the whole transaction rolls
// back.
func (s *Identity) refreshTx(ctx context.Context, calls []*refreshCall) (map[string]*identity.RefreshRead, error) {
	reads := make(map[string]*identity.RefreshRead, len(calls))
	// Each statement finds one session by its key, so none runs long
	// enough to be worth interrupting: under a context that cannot end,
	// the driver starts no goroutine per statement to watch it (3% of a
	// refresh's CPU). The transaction still ends with ctx: database/sql
	// rolls it back, and its next statement or commit fails.
	sctx := context.WithoutCancel(ctx)
	err := s.db.inTx(ctx, func(c conn) error {
		w := c.w()
		read := `SELECT ` + s.refreshReadColumns() + ` FROM sessions s` + refreshReadJoins + ` WHERE s.id = $1`
		for _, call := range calls {
			at := micros(call.next.CreatedAt)
			n, err := changed(w.ExecContext(sctx, rotateOne, call.sid, call.hash, call.next.Hash, at,
				call.policy.Idle.Microseconds(), call.policy.Absolute.Microseconds()))
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			r, err := s.scanRefreshRead(w.QueryRowContext(sctx, read, call.sid), true)
			if err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					err = errors.New("rotated session has no user")
				}
				return err
			}
			if _, err := w.ExecContext(sctx, `INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at) VALUES ($1, $2, $3, $4)`,
				call.hash, call.sid, at, micros(r.Session.ExpiresAt)); err != nil {
				return c.db.dialect.translate(err)
			}
			reads[call.sid] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reads, nil
}
