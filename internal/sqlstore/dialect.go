package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gatehouse/gatehouse"
)

// dialect holds what differs between SQLite and PostgreSQL.
type dialect struct {
	name string
	// forUpdate is appended to a SELECT that must lock its row until the
	// transaction ends. SQLite needs none: its write transactions are
	// serialized (BEGIN IMMEDIATE on a single writer connection).
	forUpdate string
	// forKeyShare keeps a row from being deleted (or its key changed)
	// without blocking other readers and ordinary updates.
	forKeyShare string
	// forShare keeps a row from being updated or deleted while letting
	// other forShare holders proceed side by side.
	forShare string
	// concat is the aggregate joining strings with a separator.
	concat string
	// ilike is the case-insensitive LIKE: SQLite's LIKE already ignores
	// ASCII case (and no more, like its LOWER), PostgreSQL's ILIKE.
	ilike string
	// writableWith: INSERT, UPDATE and DELETE may run inside WITH, so
	// several writes can be one statement.
	writableWith bool
	open         func(url string) (reader, writer *sql.DB, err error)
	gooseName    goose.Dialect
	locker       func() (lock.SessionLocker, error)
}

func dialectFor(url string) (dialect, error) {
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		return dialect{name: "sqlite", concat: "group_concat", ilike: "LIKE", open: openSQLite, gooseName: goose.DialectSQLite3}, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return dialect{name: "postgres", forUpdate: " FOR UPDATE", forKeyShare: " FOR KEY SHARE", forShare: " FOR SHARE", concat: "string_agg", ilike: "ILIKE", writableWith: true,
			open: openPostgres, gooseName: goose.DialectPostgres,
			locker: func() (lock.SessionLocker, error) { return lock.NewPostgresSessionLocker() }}, nil
	}
	return dialect{}, fmt.Errorf("database url must start with sqlite: or postgres://")
}

// ValidateURL reports whether url names a supported database.
func ValidateURL(url string) error {
	if _, err := dialectFor(url); err != nil {
		return err
	}
	if url == "sqlite:" {
		return errors.New("sqlite: needs a file path, e.g. sqlite:gatehouse.db")
	}
	return nil
}

// walSizeLimit bounds the SQLite WAL file on a busy server. The
// checkpoint rounds truncate it only after a second with no writes; on a
// server that always writes, a WAL grown by one burst (a long read holding
// the checkpoints back, a bulk import) kept its high-water size. With
// this limit the writer cuts the file back to it at the first commit
// after each checkpoint has emptied the WAL. It is well above what a
// second of writes needs (24 MB at this repository's refresh load), so a
// file at its steady size is never cut and grown again: growing it makes
// each sync also write the file's new size.
var walSizeLimit int64 = 64 << 20

// openSQLite opens one writer connection, so writes queue in Go instead of
// failing with "database is locked", and a pool of query-only readers. Every
// pooled connection gets the pragmas because they are in the DSN. The
// writer never checkpoints the WAL itself (wal_autocheckpoint 0): that
// would stall the request whose commit crossed the threshold, so
// checkpoints run beside the requests, on a connection of their own
// (checkpoint.go).
func openSQLite(url string) (*sql.DB, *sql.DB, error) {
	dsn, err := sqliteDSN(url)
	if err != nil {
		return nil, nil, err
	}
	// temp_store MEMORY: the savepoints of shared transactions (txGroups)
	// journal the pages they change in a temporary file otherwise.
	// journal_size_limit: see walSizeLimit.
	writer, err := sql.Open("sqlite", dsn+"&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(2)"+
		"&_pragma=journal_size_limit("+strconv.FormatInt(walSizeLimit, 10)+")&_txlock=immediate")
	if err != nil {
		return nil, nil, err
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	// Create the file and switch it to WAL before readers open it.
	if err := writer.Ping(); err != nil {
		writer.Close()
		return nil, nil, fmt.Errorf("open sqlite: %w", err)
	}
	reader, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, nil, err
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxIdleTime(0)
	reader.SetConnMaxLifetime(0)
	return reader, writer, nil
}

// sqliteDSN is the driver's name of the SQLite file url names, with the
// pragmas every connection to it takes, ready for more ("&…"). It makes
// the file private (privateFile) first. synchronous is FULL: in WAL mode
// each commit then syncs the WAL before it returns, so a rotation that was
// answered survives a power loss; NORMAL syncs only at checkpoints and may
// lose the last commits. The batches (refreshBatches) share that sync. A
// URL that names its own (`?_pragma=synchronous(NORMAL)`, the tests'
// databases) keeps it.
func sqliteDSN(url string) (string, error) {
	path := strings.TrimPrefix(url, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if path == "" || strings.Contains(path, ":memory:") {
		return "", errors.New("sqlite: needs a file path, e.g. sqlite:gatehouse.db")
	}
	file, query, _ := strings.Cut(path, "?")
	if err := privateFile(file); err != nil {
		return "", fmt.Errorf("open sqlite: %w", err)
	}
	// SQLite reads the name as a URI: '#' would end the path, '%' start an
	// escape, so a directory named "a#b" would open the file "a" instead.
	path = uriEscaper.Replace(file)
	if query != "" {
		path += "?" + query + "&"
	} else {
		path += "?"
	}
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
	if !strings.Contains(strings.ToLower(query), "_pragma=synchronous(") {
		pragmas += "&_pragma=synchronous(FULL)"
	}
	return "file:" + path + pragmas, nil
}

// uriEscaper escapes the characters of a file path that a SQLite URI
// filename gives a meaning.
var uriEscaper = strings.NewReplacer("%", "%25", "#", "%23")

// privateFile creates the SQLite file at path readable and writable by its
// owner only, whatever the umask, or takes group and other access away from
// an existing one and its -wal and -shm files: it holds the JWT signing key.
// SQLite gives the WAL and shared-memory files it creates the main file's
// permissions.
func privateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(p, perm&0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

// pgPoolSize is how many PostgreSQL connections one instance opens: six
// per core, 12 to 48. Measured on 2 cores, 12 connections served 32
// concurrent refreshes faster and with a shorter tail than 48, which let
// more PostgreSQL backends compete for the cores than could run.
func pgPoolSize(cores int) int { return min(48, max(12, 6*cores)) }

func openPostgres(url string) (*sql.DB, *sql.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, nil, err
	}
	n := pgPoolSize(runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	return db, db, nil
}

func (d dialect) migrate(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	p, err := d.migrations(db, fsys)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// migrations are the migrations of fsys and the Go ones, on db.
func (d dialect) migrations(db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	opts := []goose.ProviderOption{goose.WithGoMigrations(append([]*goose.Migration{emailKeyMigration()}, d.riverMigrations()...)...)}
	if d.locker != nil {
		l, err := d.locker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	p, err := goose.NewProvider(d.gooseName, db, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// lockKey takes a lock on key held until q's transaction ends: a
// PostgreSQL transaction-scoped advisory lock, which reaches every
// instance on the database. On SQLite it does nothing: a write
// transaction already holds the only writer.
func (d dialect) lockKey(ctx context.Context, q querier, key string) error {
	if d.name != "postgres" {
		return nil
	}
	_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// retryable reports whether err aborted a PostgreSQL transaction that may
// succeed when run again: a deadlock victim or a serialization failure.
func (d dialect) retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// translate maps a driver's uniqueness violation to gatehouse.ErrConflict.
// missingParent reports whether err is a foreign-key violation: the row an
// insert refers to is gone (deleted by a concurrent request).
func (d dialect) missingParent(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23503"
	}
	var sqErr *sqlite.Error
	return errors.As(err, &sqErr) && sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func (d dialect) translate(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %s", gatehouse.ErrConflict, pgErr.ConstraintName)
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", gatehouse.ErrConflict, err)
		}
	}
	return err
}
