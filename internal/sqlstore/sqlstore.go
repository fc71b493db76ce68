// Package sqlstore is the accounts.Store on database/sql, one code path for
// SQLite (modernc.org/sqlite, pure Go) and PostgreSQL (pgx). The few
// differences between them live in dialect.go.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
)

//go:embed migrations/*.sql
var migrations embed.FS

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store implements accounts.Store. Outside a transaction reads go to the
// reader pool and writes to the writer pool; inside one both go to the
// transaction.
type Store struct {
	dialect dialect
	reader  *sql.DB
	writer  *sql.DB
	tx      *sql.Tx
	stmts   *stmtCache
	// rgate and wgate queue the callers of reader and writer in arrival
	// order (see gate); they are one queue when the pools are one.
	rgate, wgate gate
}

var _ accounts.Store = (*Store)(nil)

// Open connects to url (`sqlite:PATH` or `postgres://…`), applies pending
// migrations and returns the store.
func Open(ctx context.Context, url string) (*Store, error) {
	d, err := dialectFor(url)
	if err != nil {
		return nil, err
	}
	reader, writer, err := d.open(url)
	if err != nil {
		return nil, err
	}
	s := &Store{dialect: d, reader: reader, writer: writer}
	s.wgate = newGate(writer)
	s.rgate = s.wgate
	if reader != writer {
		s.rgate = newGate(reader)
	}
	if d.name == "sqlite" {
		s.stmts = &stmtCache{}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Migrate applies pending migrations to the database at url and closes it.
func Migrate(ctx context.Context, url string) error {
	s, err := Open(ctx, url)
	if err != nil {
		return err
	}
	return s.Close()
}

func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return s.dialect.migrate(ctx, s.writer, sub)
}

// Close closes both pools.
func (s *Store) Close() error {
	err := s.writer.Close()
	if s.reader != s.writer {
		err = errors.Join(err, s.reader.Close())
	}
	return err
}

// DB returns the writer pool, for tools and benchmarks that seed data.
func (s *Store) DB() *sql.DB { return s.writer }

func (s *Store) r() querier {
	if s.tx != nil {
		return s.stmts.on(s.writer, s.tx)
	}
	return gated{s.stmts.on(s.reader, nil), s.rgate}
}

func (s *Store) w() querier {
	if s.tx != nil {
		return s.stmts.on(s.writer, s.tx)
	}
	return gated{s.stmts.on(s.writer, nil), s.wgate}
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

// Tx implements accounts.Store.
func (s *Store) Tx(ctx context.Context, fn func(tx accounts.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	// A transaction that PostgreSQL aborts as a deadlock victim or a
	// serialization failure is run again from the start.
	defer s.stmts.prepareDeferred(ctx)
	for attempt := 1; ; attempt++ {
		err := s.tryTx(ctx, fn)
		if err == nil || attempt == 3 || !s.dialect.retryable(err) {
			return err
		}
	}
}

func (s *Store) tryTx(ctx context.Context, fn func(tx accounts.Store) error) error {
	if !s.wgate.enter(ctx) {
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer s.wgate.leave()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	inner := *s
	inner.tx = tx
	if err := fn(&inner); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", s.dialect.translate(err))
	}
	return nil
}

// Ping implements accounts.Store.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
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

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// one translates the error of a single-row read.
func (s *Store) one(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return gatehouse.ErrNotFound
	}
	return s.dialect.translate(err)
}

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

// Dialect names the database: "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect.name }
