package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// txGroupMax is the most transactions one SQLite commit carries.
const txGroupMax = 64

// savepoint is the text of the statements around a group's member i,
// built once. They run unprepared: SQLite parses such a text in less
// than the statement cache's prepared path costs in database/sql
// (Tx.StmtContext), measured in BENCHMARKS.md (2026-11-28 perf31c).
type savepoint struct{ begin, undo, release string }

var savepoints = func() (sps [txGroupMax]savepoint) {
	for i := range sps {
		name := "m" + strconv.Itoa(i)
		sps[i] = savepoint{"SAVEPOINT " + name, "ROLLBACK TO " + name, "RELEASE " + name}
	}
	return sps
}()

// txGroups lets SQLite write transactions that queue together share one
// commit, and so one WAL sync (synchronous=FULL syncs at every commit;
// on a disk that takes 10 ms each, one writer committed at most 100
// transactions a second). A transaction that finds the writer free runs
// alone, at once. One that finds it taken opens a group and waits for the
// writer; transactions that arrive meanwhile join the group; when its turn
// comes the group closes, and each member's function runs in a SAVEPOINT
// of one transaction, its error rolling back its own writes only. All are
// answered after the commit, which fails or keeps them all. The members'
// statements run under the group's context (conn.fixed): a member whose
// client gave up mid-statement would otherwise interrupt, and roll back,
// everyone's transaction. A member that gives up before its function
// starts is left out; once started it is waited for.
type txGroups struct {
	mu   sync.Mutex
	open *txGroup
}

type txGroup struct {
	members []*txMember
	done    chan struct{}
}

type txMember struct {
	fn    func(c conn) error
	state atomic.Int32 // txWaiting, txStarted or txWithdrawn
	err   error
}

const (
	txWaiting int32 = iota
	txStarted
	txWithdrawn
)

// run runs fn in a write transaction of db, alone or in a group.
func (g *txGroups) run(ctx context.Context, db *DB, fn func(c conn) error) error {
	g.mu.Lock()
	if o := g.open; o != nil && len(o.members) < txGroupMax {
		m := &txMember{fn: fn}
		o.members = append(o.members, m)
		g.mu.Unlock()
		return m.wait(ctx, o)
	}
	select {
	case db.wgate <- struct{}{}:
		g.mu.Unlock()
		defer db.wgate.leave()
		return db.txAlone(ctx, fn)
	default:
	}
	m := &txMember{fn: fn}
	o := &txGroup{members: []*txMember{m}, done: make(chan struct{})}
	g.open = o
	g.mu.Unlock()
	go g.lead(context.WithoutCancel(ctx), db, o)
	return m.wait(ctx, o)
}

// wait returns m's answer once its group is done, or ctx's error when it
// gives up before its function started.
func (m *txMember) wait(ctx context.Context, o *txGroup) error {
	select {
	case <-o.done:
		return m.err
	case <-ctx.Done():
		if m.state.CompareAndSwap(txWaiting, txWithdrawn) {
			return ctx.Err()
		}
		<-o.done
		return m.err
	}
}

// lead waits for the writer for group o, closes it to newcomers, runs it
// and answers every member.
// ctx ends with none of the members (they may withdraw while they wait)
// and has no deadline: a member's transaction may take as long as it did
// alone.
func (g *txGroups) lead(ctx context.Context, db *DB, o *txGroup) {
	defer close(o.done)
	entered := db.wgate.enter(ctx)
	g.mu.Lock()
	if g.open == o {
		g.open = nil
	}
	g.mu.Unlock()
	if !entered {
		for _, m := range o.members {
			m.err = fmt.Errorf("begin: %w", ctx.Err())
		}
		return
	}
	defer db.wgate.leave()
	if len(o.members) == 1 {
		m := o.members[0]
		if m.state.CompareAndSwap(txWaiting, txStarted) {
			m.err = db.txAlone(ctx, func(c conn) error { return runMember(m.fn, c) })
		}
		return
	}
	if err := db.txShared(ctx, o.members); err != nil {
		for _, m := range o.members {
			if m.state.Load() != txWithdrawn {
				m.err = err // rolled back, or never run
			}
		}
	}
}

// txAlone runs fn in a transaction of its own; the caller holds the gate.
func (db *DB) txAlone(ctx context.Context, fn func(c conn) error) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(conn{db: db, tx: tx}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", db.dialect.translate(err))
	}
	return nil
}

// txShared runs members, each in a SAVEPOINT, in one transaction, and
// commits it; the caller holds the gate. A member's error is its own
// (m.err), its writes undone; the error returned is the transaction's,
// every started member's.
func (db *DB) txShared(ctx context.Context, members []*txMember) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	c := conn{db: db, tx: tx, fixed: ctx}
	for i, m := range members {
		if !m.state.CompareAndSwap(txWaiting, txStarted) {
			continue
		}
		sp := &savepoints[i]
		if _, err := tx.ExecContext(ctx, sp.begin); err != nil {
			tx.Rollback()
			return fmt.Errorf("savepoint: %w", err)
		}
		if m.err = runMember(m.fn, c); m.err != nil {
			// An error SQLite ends the whole transaction with (a full
			// disk, an I/O error) leaves no savepoint to go back to.
			if _, err := tx.ExecContext(ctx, sp.undo); err != nil {
				tx.Rollback()
				return errors.Join(m.err, err)
			}
		}
		if _, err := tx.ExecContext(ctx, sp.release); err != nil {
			tx.Rollback()
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", db.dialect.translate(err))
	}
	return nil
}

// runMember runs a member's function on the group's goroutine, where a
// panic would end the process rather than the one request (the kernel
// recovers a handler's): it becomes the member's error.
func runMember(fn func(c conn) error, c conn) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in a grouped transaction: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(c)
}
