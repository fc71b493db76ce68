package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"modernc.org/sqlite"
)

// SQLitePath is the file of a sqlite: URL, "" for any other.
func SQLitePath(url string) string {
	if !strings.HasPrefix(url, "sqlite:") {
		return ""
	}
	file, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//"), "?")
	return file
}

// ErrBackupPostgres is returned for a PostgreSQL database: pg_dump takes
// its backups (README).
var ErrBackupPostgres = errors.New("PostgreSQL is backed up with pg_dump and restored with pg_restore (README, Backups)")

// Backup writes a consistent copy of the SQLite database at url to file,
// which must not exist, with SQLite's online backup in one step: pages are
// copied as they are, under one read transaction, so the copy is the
// database as it stood when it began, while the instances using it go on
// writing (WAL: a reader blocks no writer). A backup in several steps would
// start again after every write of another connection, and VACUUM INTO,
// which rebuilds every table and index row by row, took 2 minutes for
// 1 GiB here (BENCHMARKS.md). It does not migrate the database.
func Backup(ctx context.Context, url, file string) (err error) {
	src := SQLitePath(url)
	if src == "" {
		return ErrBackupPostgres
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: no database at %s", src)
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("backup: %s exists; name a new file", file)
		}
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(file)
		}
	}()
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(src)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		b, err := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		}).NewBackup("file:" + uriEscaper.Replace(file))
		if err != nil {
			return err
		}
		_, err = b.Step(-1)
		return errors.Join(err, b.Finish())
	})
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncFile(file)
}

// syncFile flushes file to the disk.
func syncFile(file string) error {
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// CheckBackup reports whether file is a sound SQLite database with
// Gatehouse's schema (quick_check, and a goose version table).
func CheckBackup(ctx context.Context, file string) error {
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(file)+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var ok string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&ok); err != nil || ok != "ok" {
		return fmt.Errorf("restore: %s is not a sound SQLite database (%v %s)", file, err, ok)
	}
	var v int64
	if err := db.QueryRowContext(ctx, "SELECT max(version_id) FROM goose_db_version").Scan(&v); err != nil {
		return fmt.Errorf("restore: %s is not a Gatehouse database", file)
	}
	if v > SchemaVersion() {
		return &ErrSchemaNewer{Database: v, Known: SchemaVersion()}
	}
	return nil
}
