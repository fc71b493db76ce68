package sqlstore

import (
	"context"
	"io/fs"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// BackfillEmailKeys is backfillEmailKeys, for the tests of migration 00100.
var BackfillEmailKeys = backfillEmailKeys

// MigrateDownTo undoes the migrations after version v, for the tests of a
// migration's data: rows written as the older schema had them are then
// carried forward by Open.
func (db *DB) MigrateDownTo(ctx context.Context, v int64) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := db.dialect.migrations(db.writer, sub)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// RefreshAll runs the refreshes of sessions sids, presenting hashes, with
// successors next, under policy p, as one batch of the refresh batches
// runs them, and returns each one's read (nil: nothing rotated) and error.
func (s *Identity) RefreshAll(ctx context.Context, sids, hashes []string, next []*identity.RefreshToken, p identity.SessionPolicy) ([]*identity.RefreshRead, []error) {
	calls := make([]*refreshCall, len(sids))
	for i := range calls {
		calls[i] = &refreshCall{sid: sids[i], hash: hashes[i], next: next[i], policy: p}
	}
	s.runRefreshes(ctx, calls)
	reads, errs := make([]*identity.RefreshRead, len(calls)), make([]error, len(calls))
	for i, c := range calls {
		reads[i], errs[i] = c.read, c.err
	}
	return reads, errs
}

// HoldRefreshSlots takes every refresh slot, as refreshes running would,
// until release is called.
func (db *DB) HoldRefreshSlots() (release func()) {
	n := cap(db.refreshes.slots)
	for range n {
		db.refreshes.slots <- struct{}{}
	}
	return func() {
		for range n {
			<-db.refreshes.slots
		}
	}
}

// RefreshesWaiting is how many refreshes the batch waiting for a slot
// holds.
func (db *DB) RefreshesWaiting() int {
	db.refreshes.mu.Lock()
	defer db.refreshes.mu.Unlock()
	if db.refreshes.open == nil {
		return 0
	}
	return len(db.refreshes.open.calls)
}

// RefreshManySQL is the statement of a batch of refreshes, $1 to $6 its
// arrays.
func (s *Identity) RefreshManySQL() string { return s.refreshManySQL() }

// RefreshBatchMax is the most refreshes a batch holds.
const RefreshBatchMax = refreshBatchMax

// RefreshTxSQL is the text of SQLite's batch statements for n refreshes:
// the rotation ($1 to $6 the first refresh's, then the next one's) and
// the read of n rotated sessions ($1 to $n their ids).
func (s *Identity) RefreshTxSQL(n int) (rotate, read string) {
	return rotateTexts.get(n, rotateText), readTexts.get(n, s.readText)
}

// InTx runs fn in a write transaction of db (on SQLite, in a group when
// others queue), handing it a function that executes a statement in it
// under the context given.
func (db *DB) InTx(ctx context.Context, fn func(exec func(ctx context.Context, query string, args ...any) error) error) error {
	return db.inTx(ctx, func(c conn) error {
		return fn(func(ctx context.Context, query string, args ...any) error {
			_, err := c.w().ExecContext(ctx, query, args...)
			return err
		})
	})
}

// HoldWriter takes the writer's gate, as a running transaction would,
// until release is called.
func (db *DB) HoldWriter() (release func()) {
	db.wgate <- struct{}{}
	return func() { <-db.wgate }
}

// TxsWaiting is how many transactions wait in the open group.
func (db *DB) TxsWaiting() int {
	db.txs.mu.Lock()
	defer db.txs.mu.Unlock()
	if db.txs.open == nil {
		return 0
	}
	return len(db.txs.open.members)
}

// CheckpointRound runs one round of the SQLite checkpoints, as the
// background loop does each second: last is the WAL's length the round
// before found, and it returns the one it leaves.
func (db *DB) CheckpointRound(last int) int { return db.checkpoints.round(last) }

// StopCheckpointLoop stops the background checkpoint rounds, so a test
// runs them (CheckpointRound) alone.
func (db *DB) StopCheckpointLoop() {
	db.checkpoints.once.Do(func() { close(db.checkpoints.stop) })
	<-db.checkpoints.done
}

// SetWALSizeLimit sets walSizeLimit for the databases opened until the
// test ends.
func SetWALSizeLimit(t interface{ Cleanup(func()) }, n int64) {
	old := walSizeLimit
	walSizeLimit = n
	t.Cleanup(func() { walSizeLimit = old })
}

// SetRestartFrames sets restartFrames until the test ends.
func SetRestartFrames(t interface{ Cleanup(func()) }, n int) {
	old := restartFrames
	restartFrames = n
	t.Cleanup(func() { restartFrames = old })
}

// HoldReaders takes every place at the reader's gate, as running reads
// would, until release is called.
func (db *DB) HoldReaders() (release func()) {
	n := cap(db.rgate)
	for range n {
		db.rgate <- struct{}{}
	}
	return func() {
		for range n {
			<-db.rgate
		}
	}
}
