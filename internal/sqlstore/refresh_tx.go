package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// rotateMany is refreshMany's check and rotation on SQLite, for every
// call of a batch in one statement: i holds one row per call ($1 session,
// $2 presented hash, $3 successor's hash, $4 time, $5 idle, $6 absolute,
// in microseconds, then the next call's six), and each session is found
// by its key (i is scanned, sessions searched). The same conditions and
// the same new expiry as refreshMany, and the conditional UPDATE lets one
// caller through; the sessions rotated come back.
const rotateMany = `WITH i(sid, hash, next, at, idle, absolute) AS (VALUES %s)
	UPDATE sessions SET refresh_hash = i.next, last_used_at = i.at, expires_at = MIN(i.at + i.idle, sessions.created_at + i.absolute)
	FROM i
	WHERE sessions.id = i.sid AND sessions.refresh_hash = i.hash AND sessions.revoked_at IS NULL AND sessions.grant_id IS NULL
		AND NOT sessions.mfa_pending AND sessions.expires_at > i.at AND sessions.created_at + i.absolute > i.at
	RETURNING sessions.id`

// sizedText is a statement's text for each batch size, built the first
// time that size runs.
type sizedText struct {
	once [refreshBatchMax + 1]sync.Once
	text [refreshBatchMax + 1]string
}

// get returns the text for n, built by build; kept for 1 ≤ n ≤
// refreshBatchMax, the sizes a batch has.
func (t *sizedText) get(n int, build func(n int) string) string {
	if n >= len(t.text) {
		return build(n)
	}
	t.once[n].Do(func() { t.text[n] = build(n) })
	return t.text[n]
}

// The texts of refreshTx's three statements: rotate for n calls, read and
// history for n rotations. refreshTx runs on SQLite only, so one text of
// each size serves every database the process opens.
var rotateTexts, readTexts, historyTexts sizedText

func rotateText(n int) string { return strings.Replace(rotateMany, "%s", valueRows(n, 6), 1) }

func historyText(n int) string {
	return `INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at) VALUES ` + valueRows(n, 4)
}

// readText is the read of n rotated sessions, by their keys.
func (s *Identity) readText(n int) string {
	return `SELECT ` + s.refreshReadColumns() + ` FROM sessions s` + refreshReadJoins + ` WHERE s.id IN (` + placeholders(1, n) + `)`
}

// valueRows is n rows of width numbered parameters, from $1:
// "($1, $2), ($3, $4)" for n 2, width 2.
func valueRows(n, width int) string {
	rows := make([]string, n)
	for r := range rows {
		rows[r] = "(" + placeholders(r*width+1, width) + ")"
	}
	return strings.Join(rows, ", ")
}

// refreshTx is refreshBatch on SQLite: the batch's rotations, reads and
// history rows in one write transaction of three statements (rotateMany,
// one read of every rotated session, one INSERT of their history rows),
// so the refreshes that queued together share its BEGIN, its statements,
// its commit and the commit's WAL sync, and each is answered (by the
// batches) only once that commit is durable. A token the history holds
// already fails the INSERT, and the whole transaction rolls back.
func (s *Identity) refreshTx(ctx context.Context, calls []*refreshCall) (map[string]*identity.RefreshRead, error) {
	reads := make(map[string]*identity.RefreshRead, len(calls))
	// Each statement finds its sessions by their keys, so none runs long
	// enough to be worth interrupting: under a context that cannot end,
	// the driver starts no goroutine per statement to watch it (3% of a
	// refresh's CPU). The transaction still ends with ctx: database/sql
	// rolls it back, and its next statement or commit fails.
	sctx := context.WithoutCancel(ctx)
	err := s.db.inTx(ctx, func(c conn) error {
		w := c.w()
		byID := make(map[string]*refreshCall, len(calls))
		args := make([]any, 0, 6*len(calls))
		for _, call := range calls {
			byID[call.sid] = call
			args = append(args, call.sid, call.hash, call.next.Hash, micros(call.next.CreatedAt),
				call.policy.Idle.Microseconds(), call.policy.Absolute.Microseconds())
		}
		ids := make([]any, 0, len(calls))
		err := eachRow(w.QueryContext(sctx, rotateTexts.get(len(calls), rotateText), args...))(func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			ids = append(ids, id)
			return err
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		err = eachRow(w.QueryContext(sctx, readTexts.get(len(ids), s.readText), ids...))(func(rows *sql.Rows) error {
			r, err := s.scanRefreshRead(rows, true)
			if err == nil {
				reads[r.Session.ID] = r
			}
			return err
		})
		if err != nil {
			return err
		}
		if len(reads) != len(ids) {
			return errors.New("rotated session has no user")
		}
		hist := make([]any, 0, 4*len(ids))
		for _, id := range ids {
			call := byID[id.(string)]
			hist = append(hist, call.hash, call.sid, micros(call.next.CreatedAt), micros(reads[call.sid].Session.ExpiresAt))
		}
		if _, err := w.ExecContext(sctx, historyTexts.get(len(ids), historyText), hist...); err != nil {
			return c.db.dialect.translate(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reads, nil
}

// eachRow calls fn on each row of a query's answer and closes it; the
// first error, the query's, fn's or the rows', ends it.
func eachRow(rows *sql.Rows, err error) func(fn func(rows *sql.Rows) error) error {
	return func(fn func(rows *sql.Rows) error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := fn(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
}
