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
	}{
		{name: "new file"},
		{name: "existing world-readable file", existing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gatehouse.db")
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
		})
	}
}
