package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
)

// backupCommand is "gatehouse backup FILE": a consistent copy of the
// configured SQLite database, taken while it serves writes.
func backupCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return fileCommand(ctx, "backup", args, getenv, stdout, stderr, sqlstore.Backup)
}

// restoreCommand is "gatehouse restore FILE": the configured SQLite
// database replaced by a backup, refused while a server uses it.
func restoreCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return fileCommand(ctx, "restore", args, getenv, stdout, stderr, restore)
}

func fileCommand(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer,
	do func(ctx context.Context, url, file string) error) int {
	if len(args) != 1 || args[0] == "" || args[0][0] == '-' {
		fmt.Fprintf(stderr, "usage: gatehouse %s FILE\n", name)
		return 2
	}
	cfg, err := loadConfig(nil, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: configuration: %s\n", oneLine(err))
		return 2
	}
	if err := do(ctx, cfg.DatabaseURL, args[0]); err != nil {
		fmt.Fprintf(stderr, "gatehouse %s: %s\n", name, oneLine(err))
		return 1
	}
	fmt.Fprintf(stdout, "%s: done (%s)\n", name, args[0])
	return 0
}

// lockPath is the file a server holds a shared lock on while it uses the
// SQLite database at path, and restore an exclusive one.
func lockPath(path string) string { return path + ".lock" }

// holdDatabase takes the shared lock of the SQLite database at url for as
// long as the server runs (nothing for PostgreSQL); release drops it.
func holdDatabase(url string) (release func(), err error) {
	path := sqlstore.SQLitePath(url)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(lockPath(path), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("database lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, errors.New("database lock: a restore is under way")
	}
	return func() { f.Close() }, nil
}

// restore replaces the SQLite database at url by the backup file: it
// checks the backup, takes the database's lock exclusively (refused while
// a server holds it), then copies the backup beside the database and
// renames it over, dropping the old write-ahead log.
func restore(ctx context.Context, url, file string) error {
	path := sqlstore.SQLitePath(url)
	if path == "" {
		return sqlstore.ErrBackupPostgres
	}
	if err := sqlstore.CheckBackup(ctx, file); err != nil {
		return err
	}
	lock, err := os.OpenFile(lockPath(path), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("database lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("the database %s is in use by a running server: stop it first", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	src, err := os.Open(file)
	if err != nil {
		tmp.Close()
		return err
	}
	_, err = io.Copy(tmp, src)
	src.Close()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	return os.Rename(tmp.Name(), path)
}
