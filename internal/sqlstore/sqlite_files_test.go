//go:build unix

package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The SQLite file holds the JWT signing key: it and its WAL and
// shared-memory files are the owner's alone, under the common umask 022,
// whether Gatehouse creates the file or finds it world-readable.
func TestSQLiteFilesPrivate(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	for _, tc := range []struct {
		name     string
		existing bool
		dir      string // under the test's directory
	}{
		{name: "new file"},
		{name: "existing world-readable file", existing: true},
		// SQLite reads a URI: unescaped, the path would end at '#' (the file
		// "a" opened, world-readable, shared by every path "a#…") or '%'
		// start an escape.
		{name: "directory with # and %", dir: "a#b%41c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.dir)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "gatehouse.db")
			if tc.existing {
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(context.Background(), "sqlite:"+path)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			if _, err := s.Identity().SettingOrCreate(context.Background(), "probe", "1"); err != nil {
				t.Fatalf("write: %v", err)
			}
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatalf("stat: %v", err)
				}
				if got := fi.Mode().Perm(); got != 0o600 {
					t.Errorf("%s has mode %04o; want 0600", filepath.Base(p), got)
				}
			}
			if entries, _ := os.ReadDir(filepath.Dir(dir)); tc.dir != "" && len(entries) != 1 {
				t.Errorf("%d entries beside the database's directory; want none (a file opened at a cut path)", len(entries)-1)
			}
		})
	}
}
