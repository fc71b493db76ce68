package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// txFixture is a fresh SQLite database (its write transactions are
// grouped) with a table the tests write.
func txFixture(t *testing.T) *sqlstore.DB {
	db := open(t, testenv.FreshURL(t, "sqlite"))
	exec(t, db, `CREATE TABLE t (k TEXT PRIMARY KEY)`)
	return db
}

// waitTxs waits until n transactions wait in the open group; past 5 s it
// releases the writer (release) and fails.
func waitTxs(t *testing.T, db *sqlstore.DB, n int, release func()) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); db.TxsWaiting() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("transactions waiting = %d; want %d", db.TxsWaiting(), n)
		}
	}
}

// has reports whether row k was committed.
func has(t *testing.T, db *sqlstore.DB, k string) bool {
	t.Helper()
	var n int
	if err := db.DB().QueryRow(`SELECT count(*) FROM t WHERE k = $1`, k).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// insert is a transaction that inserts k and then fails with fail (nil:
// commits), its answer sent to out.
func insert(db *sqlstore.DB, ctx context.Context, k string, fail error, out chan<- error) {
	out <- db.InTx(ctx, func(exec func(ctx context.Context, query string, args ...any) error) error {
		if err := exec(ctx, `INSERT INTO t (k) VALUES ($1)`, k); err != nil {
			return err
		}
		return fail
	})
}

// Transactions that queue for the SQLite writer share one commit, and
// each keeps its own outcome: one that fails rolls back its own writes
// only, and the others commit; one that fails with a constraint does too.
func TestTxGroupKeepsEachOutcome(t *testing.T) {
	db := txFixture(t)
	ctx := context.Background()
	exec(t, db, `INSERT INTO t (k) VALUES ('taken')`)
	release := db.HoldWriter()
	bad := errors.New("refused")
	a, b, c, d := make(chan error, 1), make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go insert(db, ctx, "a", nil, a)
	waitTxs(t, db, 1, release)
	go insert(db, ctx, "b", bad, b)
	waitTxs(t, db, 2, release)
	go insert(db, ctx, "taken", nil, c)
	waitTxs(t, db, 3, release)
	go insert(db, ctx, "d", nil, d)
	waitTxs(t, db, 4, release)
	release()
	if err := <-a; err != nil {
		t.Errorf("a: %v; want committed", err)
	}
	if err := <-b; !errors.Is(err, bad) {
		t.Errorf("b: %v; want its own error", err)
	}
	if err := <-c; err == nil {
		t.Error("c, a duplicate key: committed; want its error")
	}
	if err := <-d; err != nil {
		t.Errorf("d: %v; want committed", err)
	}
	if !has(t, db, "a") || has(t, db, "b") || !has(t, db, "d") {
		t.Errorf("committed a %v, b %v, d %v; want a and d only", has(t, db, "a"), has(t, db, "b"), has(t, db, "d"))
	}
}

// The statements around a group's members are the same texts in every
// group (built once): round after round, each member keeps its own
// outcome, the failing one's savepoint rolled back by its own name.
func TestTxGroupSavepointsEachRound(t *testing.T) {
	db := txFixture(t)
	ctx := context.Background()
	bad := errors.New("refused")
	for round := range 3 {
		release := db.HoldWriter()
		a, b, c := make(chan error, 1), make(chan error, 1), make(chan error, 1)
		ka, kb, kc := fmt.Sprint("a", round), fmt.Sprint("b", round), fmt.Sprint("c", round)
		go insert(db, ctx, ka, nil, a)
		waitTxs(t, db, 1, release)
		go insert(db, ctx, kb, bad, b)
		waitTxs(t, db, 2, release)
		go insert(db, ctx, kc, nil, c)
		waitTxs(t, db, 3, release)
		release()
		if err := <-a; err != nil {
			t.Errorf("round %d, a: %v; want committed", round, err)
		}
		if err := <-b; !errors.Is(err, bad) {
			t.Errorf("round %d, b: %v; want its own error", round, err)
		}
		if err := <-c; err != nil {
			t.Errorf("round %d, c: %v; want committed", round, err)
		}
		if !has(t, db, ka) || has(t, db, kb) || !has(t, db, kc) {
			t.Errorf("round %d: committed a %v, b %v, c %v; want a and c only", round, has(t, db, ka), has(t, db, kb), has(t, db, kc))
		}
	}
}

// A transaction whose caller gives up while it waits in a group fails
// alone with its context's error and writes nothing; the others commit.
// One whose caller gives up while its statements run (its own context
// ended between two statements) does not interrupt the shared
// transaction: it and the others commit, as one transaction alone would
// have had it already started.
func TestTxGroupMemberGivesUp(t *testing.T) {
	db := txFixture(t)
	release := db.HoldWriter()
	early, cancelEarly := context.WithCancel(context.Background())
	gaveUp, midway, other := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go insert(db, early, "early", nil, gaveUp)
	waitTxs(t, db, 1, release)
	late, cancelLate := context.WithCancel(context.Background())
	go func() {
		midway <- db.InTx(late, func(exec func(ctx context.Context, query string, args ...any) error) error {
			if err := exec(late, `INSERT INTO t (k) VALUES ('midway')`); err != nil {
				return err
			}
			cancelLate()
			return exec(late, `INSERT INTO t (k) VALUES ('midway2')`)
		})
	}()
	waitTxs(t, db, 2, release)
	go insert(db, context.Background(), "other", nil, other)
	waitTxs(t, db, 3, release)
	cancelEarly()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the transaction that gave up: %v; want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Error("the transaction that gave up still waits for its group")
	}
	release()
	if err := <-midway; err != nil {
		t.Errorf("the transaction whose caller gave up midway: %v; want committed", err)
	}
	if err := <-other; err != nil {
		t.Errorf("the other transaction: %v; want committed", err)
	}
	if has(t, db, "early") || !has(t, db, "midway") || !has(t, db, "midway2") || !has(t, db, "other") {
		t.Errorf("committed early %v, midway %v, midway2 %v, other %v; want all but early",
			has(t, db, "early"), has(t, db, "midway"), has(t, db, "midway2"), has(t, db, "other"))
	}
}

// A transaction that panics in a group (on the group's goroutine, where
// no handler recovers it) fails alone with an error naming the panic; the
// process lives on and the others commit.
func TestTxGroupMemberPanics(t *testing.T) {
	db := txFixture(t)
	ctx := context.Background()
	release := db.HoldWriter()
	a, b, c := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go insert(db, ctx, "a", nil, a)
	waitTxs(t, db, 1, release)
	go func() {
		b <- db.InTx(ctx, func(exec func(ctx context.Context, query string, args ...any) error) error {
			if err := exec(ctx, `INSERT INTO t (k) VALUES ('b')`); err != nil {
				return err
			}
			panic("member b")
		})
	}()
	waitTxs(t, db, 2, release)
	go insert(db, ctx, "c", nil, c)
	waitTxs(t, db, 3, release)
	release()
	if err := <-b; err == nil || !strings.Contains(err.Error(), "member b") {
		t.Errorf("the transaction that panicked: %v; want an error naming the panic", err)
	}
	if err := errors.Join(<-a, <-c); err != nil {
		t.Errorf("the others: %v; want committed", err)
	}
	if !has(t, db, "a") || has(t, db, "b") || !has(t, db, "c") {
		t.Errorf("committed a %v, b %v, c %v; want a and c only", has(t, db, "a"), has(t, db, "b"), has(t, db, "c"))
	}
}
