// Package sqlstore is the storage of every module on database/sql, one
// code path for SQLite (modernc.org/sqlite, pure Go) and PostgreSQL (pgx).
// DB owns what they share: the pools, their FIFO gates, the statement
// cache, the dialect (dialect.go holds the few differences) and the
// migrations. Each module's Store interface has its own type here
// (Identity, Workspace, OAuth, Tasks, Forms, Links, Sign, Webhooks), made from the DB
// and running its transactions as a value of its own type.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"github.com/gatehouse/gatehouse/internal/seal"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/revocation"
)

//go:embed migrations/*.sql
var migrations embed.FS

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is an open database: the reader and writer pools (one pool when the
// database allows one writer per process is all it needs, see dialect.go),
// their gates and the statement cache. The module stores are views of it.
type DB struct {
	dialect dialect
	reader  *sql.DB
	writer  *sql.DB
	stmts   *stmtCache
	// rgate and wgate queue the callers of reader and writer in arrival
	// order (see gate); they are one queue when the pools are one.
	rgate, wgate gate
	url          string
	// jobs inserts background jobs in our transactions (jobs.go), into
	// queue.
	jobs  *river.Client[*sql.Tx]
	queue string
	// mail seals the messages QueueMail queues (mail.go).
	mail *mail.Sealer
	// hooks seals webhook deliveries' bodies in the queue (WithWebhookSeal);
	// nil: in clear.
	hooks *seal.Box
	// revoked is called with the revocations a transaction recorded after
	// it commits (OnRevoke); nil: nothing to tell.
	revoked func(ctx context.Context, es []revocation.Entry)
	// webhookReads shares the reads of one webhook (shared_read.go).
	webhookReads *sharedReads
	// refreshes batches the refreshes that queue together.
	refreshes *refreshBatches
	// checkpoints runs SQLite's WAL checkpoints off the writer
	// (checkpoint.go); nil on PostgreSQL.
	checkpoints *checkpoints
	// txs groups SQLite's write transactions into shared commits
	// (txgroup.go); nil on PostgreSQL.
	txs *txGroups
	// tracer makes statements and transactions spans (WithTracer); nil:
	// none.
	tracer Tracer
}

// Open connects to url (`sqlite:PATH` or `postgres://…`), applies pending
// migrations and returns the database.
func Open(ctx context.Context, url string) (*DB, error) {
	d, err := dialectFor(url)
	if err != nil {
		return nil, err
	}
	reader, writer, err := d.open(url)
	if err != nil {
		return nil, err
	}
	db := &DB{dialect: d, reader: reader, writer: writer, url: url, queue: river.QueueDefault, webhookReads: &sharedReads{}}
	db.wgate = newGate(writer)
	db.rgate = db.wgate
	if reader != writer {
		db.rgate = newGate(reader)
	}
	if d.name == "sqlite" {
		db.stmts = &stmtCache{}
		db.refreshes = newRefreshBatches(1)
		db.txs = &txGroups{}
	} else {
		db.refreshes = newRefreshBatches(refreshSlots(runtime.GOMAXPROCS(0)))
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.newInserter(); err != nil {
		db.Close()
		return nil, err
	}
	if d.name == "sqlite" {
		if db.checkpoints, err = startCheckpoints(url, db.wgate); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// Migrate applies pending migrations to the database at url and closes it.
func Migrate(ctx context.Context, url string) error {
	db, err := Open(ctx, url)
	if err != nil {
		return err
	}
	return db.Close()
}

// migrate applies the pending migrations; a database a newer release has
// migrated is refused (ErrSchemaNewer), before anything is written.
func (db *DB) migrate(ctx context.Context) error {
	if _, _, err := db.Schema(ctx); err != nil {
		if newer := (*ErrSchemaNewer)(nil); errors.As(err, &newer) {
			return err
		}
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return db.dialect.migrate(ctx, db.writer, sub)
}

// Close stops the checkpoints and closes both pools.
func (db *DB) Close() error {
	var err error
	if db.checkpoints != nil {
		err = db.checkpoints.close()
	}
	err = errors.Join(err, db.writer.Close())
	if db.reader != db.writer {
		err = errors.Join(err, db.reader.Close())
	}
	return err
}

// DB returns the writer pool, for tests and tools that seed or check rows.
func (db *DB) DB() *sql.DB { return db.writer }

// Reader returns the reader pool (the writer's when there is one pool),
// for the metrics of its use.
func (db *DB) Reader() *sql.DB { return db.reader }

// Dialect names the database: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect.name }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// inTx runs fn in a read-write transaction and commits when fn returns
// nil. A transaction that PostgreSQL aborts as a deadlock victim or a
// serialization failure is run again from the start.
func (db *DB) inTx(ctx context.Context, fn func(c conn) error) error {
	defer db.stmts.prepareDeferred(ctx)
	for attempt := 1; ; attempt++ {
		var revoked []revocation.Entry
		err := db.tryTx(ctx, func(c conn) error {
			c.revoked = &revoked
			return fn(c)
		})
		if err == nil && len(revoked) > 0 && db.revoked != nil {
			db.revoked(ctx, revoked)
		}
		if err == nil || attempt == 3 || !db.dialect.retryable(err) {
			return err
		}
	}
}

// tryTx runs fn in one transaction: on SQLite shared with those queued
// beside it (txGroups).
func (db *DB) tryTx(ctx context.Context, fn func(c conn) error) (err error) {
	if db.tracer != nil {
		var end func(error)
		ctx, end = db.tracer.Query(ctx, db.dialect.name, "TRANSACTION")
		defer func() { end(err) }()
	}
	if db.txs != nil {
		return db.txs.run(ctx, db, fn)
	}
	if !db.wgate.enter(ctx) {
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer db.wgate.leave()
	return db.txAlone(ctx, fn)
}

// conn is what every store is made of: the database and, inside a
// transaction, the transaction. Outside one, reads go to the reader pool
// and writes to the writer pool; inside one both go to the transaction.
type conn struct {
	db *DB
	tx *sql.Tx
	// revoked collects, inside a transaction, the revocations it recorded.
	revoked *[]revocation.Entry
	// fixed, when set, is the context of every statement in the
	// transaction, whatever context its caller passes: a transaction
	// shared by several callers (txGroups) ends with none of theirs.
	fixed context.Context
}

// ctx is the context c's statements run under: fixed, or the caller's.
func (c conn) ctx(ctx context.Context) context.Context {
	if c.fixed != nil {
		return c.fixed
	}
	return ctx
}

// DB returns the writer pool, for tests and tools that seed or check rows.
func (c conn) DB() *sql.DB { return c.db.writer }

func (c conn) r() querier {
	if c.tx != nil {
		return c.db.trace(c.inTxQuerier())
	}
	return c.db.trace(gated{c.db.stmts.on(c.db.reader, nil), c.db.rgate})
}

// rKey is r for a read that finds its rows by unique keys, bounded and
// too short to be worth interrupting: it waits for the reader's gate
// under the caller's context, which may end the wait, but its statement
// runs under a context that cannot end, so neither the driver nor
// database/sql starts a goroutine to watch it (two a query). Inside a
// transaction it is r.
func (c conn) rKey() querier {
	if c.tx != nil {
		return c.r()
	}
	return c.db.trace(gated{uncancelled{c.db.stmts.on(c.db.reader, nil)}, c.db.rgate})
}

// uncancelled is a querier whose calls run under their context without
// its end (context.WithoutCancel), unless it has ended already: then the
// call fails at once with its error, as gated's QueryRowContext expects
// of a caller that gave up waiting.
type uncancelled struct{ q querier }

// lasting is ctx without its end, or ctx itself once it has ended.
func lasting(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

func (q uncancelled) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.q.ExecContext(lasting(ctx), query, args...)
}

func (q uncancelled) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.q.QueryContext(lasting(ctx), query, args...)
}

func (q uncancelled) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.q.QueryRowContext(lasting(ctx), query, args...)
}

func (c conn) w() querier {
	if c.tx != nil {
		return c.db.trace(c.inTxQuerier())
	}
	g := gated{c.db.stmts.on(c.db.writer, nil), c.db.wgate}
	if c.db.txs != nil {
		return c.db.trace(grouped{g, c.db})
	}
	return c.db.trace(g)
}

// grouped is the SQLite writer outside a transaction: a write statement
// runs as a transaction of its own, which shares its commit with those
// queued beside it (txGroups). A query (UPDATE … RETURNING) keeps its
// connection until its rows are read, so it runs alone at the gate.
type grouped struct {
	gated
	db *DB
}

func (q grouped) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := q.db.inTx(ctx, func(c conn) (err error) {
		res, err = c.inTxQuerier().ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (c conn) inTxQuerier() querier {
	q := c.db.stmts.on(c.db.writer, c.tx)
	if c.fixed != nil {
		return fixedCtx{q, c.fixed}
	}
	return q
}

// fixedCtx is a querier whose calls all run under ctx.
type fixedCtx struct {
	q   querier
	ctx context.Context
}

func (q fixedCtx) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	return q.q.ExecContext(q.ctx, query, args...)
}

func (q fixedCtx) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.q.QueryContext(q.ctx, query, args...)
}

func (q fixedCtx) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	return q.q.QueryRowContext(q.ctx, query, args...)
}

// inTx runs fn on a conn bound to a transaction: c itself when it is
// already inside one, so nested Tx calls join the outer transaction.
func (c conn) inTx(ctx context.Context, fn func(c conn) error) error {
	if c.tx != nil {
		return fn(c)
	}
	return c.db.inTx(ctx, fn)
}

// one translates the error of a single-row read.
func (c conn) one(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return gatehouse.ErrNotFound
	}
	return c.db.dialect.translate(err)
}

// gate is a FIFO queue in front of a connection pool, as deep as the pool.
// database/sql hands a freed connection to a random waiter, so under load
// a query could wait many turns while later ones ran (on SQLite's single
// writer, p99 of a refresh was nearly five times its p50); callers blocked on a
// channel send are woken in arrival order. A call holds its place until
// the call returns, a transaction until it ends; a row not yet scanned
// keeps its connection a little longer, and the next caller waits for it
// in database/sql alone.
type gate chan struct{}

// newGate returns the gate of db's pool; nil, which lets every caller
// through, when the pool is unbounded.
func newGate(db *sql.DB) gate {
	if n := db.Stats().MaxOpenConnections; n > 0 {
		return make(gate, n)
	}
	return nil
}

// enter waits for a place; false when ctx ended first.
func (g gate) enter(ctx context.Context) bool {
	if g == nil {
		return true
	}
	select {
	case g <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (g gate) leave() {
	if g != nil {
		<-g
	}
}

// gated is a querier whose calls pass the gate.
type gated struct {
	q querier
	g gate
}

func (q gated) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !q.g.enter(ctx) {
		return nil, ctx.Err()
	}
	defer q.g.leave()
	return q.q.ExecContext(ctx, query, args...)
}

func (q gated) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !q.g.enter(ctx) {
		return nil, ctx.Err()
	}
	defer q.g.leave()
	return q.q.QueryContext(ctx, query, args...)
}

func (q gated) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if q.g.enter(ctx) {
		defer q.g.leave()
	}
	// With ctx ended the query fails at once and the row reports why.
	return q.q.QueryRowContext(ctx, query, args...)
}

// stmtCache keeps one prepared statement per query and pool, so SQLite
// does not compile the same SQL on every call. It is nil for PostgreSQL,
// where pgx already caches prepared statements per connection.
type stmtCache struct {
	m        sync.Map // stmtKey → *sql.Stmt
	deferred sync.Map // stmtKey → struct{}: met inside a transaction, not prepared yet
}

// prepareDeferred prepares the queries first met inside a transaction; it
// runs when no transaction holds the writer.
func (c *stmtCache) prepareDeferred(ctx context.Context) {
	if c == nil {
		return
	}
	c.deferred.Range(func(k, _ any) bool {
		key := k.(stmtKey)
		c.deferred.Delete(key)
		if _, ok := c.m.Load(key); ok {
			return true
		}
		if st, err := key.db.PrepareContext(ctx, key.query); err == nil {
			if _, loaded := c.m.LoadOrStore(key, st); loaded {
				st.Close()
			}
		}
		return true
	})
}

type stmtKey struct {
	db    *sql.DB
	query string
}

// on returns the querier for db, or for tx (whose pool is db).
func (c *stmtCache) on(db *sql.DB, tx *sql.Tx) querier {
	if c == nil {
		if tx != nil {
			return tx
		}
		return db
	}
	return cachedQuerier{c: c, db: db, tx: tx}
}

type cachedQuerier struct {
	c  *stmtCache
	db *sql.DB
	tx *sql.Tx
}

// stmt returns the prepared statement for query, or nil when it is not
// prepared yet and cannot be now: inside a transaction the writer's only
// connection is taken, so the query runs unprepared and is prepared after
// the transaction ends (prepareDeferred).
func (q cachedQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	key := stmtKey{q.db, query}
	v, ok := q.c.m.Load(key)
	if !ok && q.tx != nil {
		q.c.deferred.Store(key, struct{}{})
		return nil, nil
	}
	if !ok {
		st, err := q.db.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		if v, ok = q.c.m.LoadOrStore(key, st); ok {
			st.Close()
		} else {
			v = st
		}
	}
	st := v.(*sql.Stmt)
	if q.tx != nil {
		return q.tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func (q cachedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return q.tx.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (q cachedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return q.tx.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (q cachedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		// A *sql.Row cannot carry an error; run the query unprepared and
		// let it report the same error.
		if q.tx != nil {
			return q.tx.QueryRowContext(ctx, query, args...)
		}
		return q.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// micros converts t to the stored form: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// nullBool is the stored switch v: nil when it was never set.
func nullBool(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	return &v.Bool
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// affected returns ErrNotFound when res changed no row.
func affected(res sql.Result, err error) error {
	n, err := changed(res, err)
	if err != nil {
		return err
	}
	if n == 0 {
		return gatehouse.ErrNotFound
	}
	return nil
}

// changed returns how many rows res changed.
func changed(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// inserted returns ErrConflict when an INSERT … ON CONFLICT DO NOTHING wrote
// nothing.
func inserted(res sql.Result, err error) error {
	if err := affected(res, err); errors.Is(err, gatehouse.ErrNotFound) {
		return gatehouse.ErrConflict
	} else {
		return err
	}
}

// placeholders returns "$from, $from+1, …" n times.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}
