package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// pgTool returns the path of a PostgreSQL client program: on PATH, else
// the newest under /usr/lib/postgresql (Debian's layout); "" when absent.
func pgTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(found) == 0 {
		return ""
	}
	slices.Sort(found)
	return found[len(found)-1]
}

// TestPGDumpRestoreUnderWriteLoad is README's PostgreSQL backup: pg_dump
// -Fc of a live database while accounts are being created, pg_restore
// into an empty database, the service started on it; every account
// acknowledged before the dump began signs in with its password. Skipped
// without pg_dump and pg_restore.
func TestPGDumpRestoreUnderWriteLoad(t *testing.T) {
	// Mostly waiting on processes and timers: the package's slowest tests
	// overlap instead of adding up.
	t.Parallel()
	dump, restore := pgTool("pg_dump"), pgTool("pg_restore")
	if dump == "" || restore == "" {
		t.Skip("pg_dump or pg_restore not installed")
	}
	ctx := context.Background()
	url := testenv.FreshURL(t, "postgres")
	db, err := sqlstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := testenv.New(t, "postgres", testenv.Options{DB: db})
	load := registerUnderLoad(t, env)
	before := load.atLeast(5) // some accounts in before the dump
	file := filepath.Join(t.TempDir(), "gatehouse.dump")
	out, err := exec.Command(dump, "-Fc", "-f", file, url).CombinedOutput()
	acked := load.stop()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}

	target := testenv.FreshURL(t, "postgres")
	if out, err := exec.Command(restore, "-d", target, file).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
	restored, err := sqlstore.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restored.Close() })
	back := testenv.New(t, "postgres", testenv.Options{DB: restored})
	for _, a := range before {
		back.Login(t, a.Email, a.Password).Want(t, 200)
	}
	t.Logf("%d accounts acknowledged before the dump, %d in all", len(before), len(acked))
}
