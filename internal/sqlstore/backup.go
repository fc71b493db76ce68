package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
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
// which must not exist, with VACUUM INTO: one read transaction, so the
// copy is the database as it stood when it began, while the instances
// using it go on writing. It does not migrate the database.
func Backup(ctx context.Context, url, file string) error {
	src := SQLitePath(url)
	if src == "" {
		return ErrBackupPostgres
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: no database at %s", src)
	}
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("backup: %s exists; name a new file", file)
	}
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(src)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", file); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return os.Chmod(file, 0o600)
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
