package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestBackupUnderWriteLoadRestores: a backup taken while accounts are
// being created, restored into place, holds every account acknowledged
// before the backup began, and each signs in with its password.
func TestBackupUnderWriteLoadRestores(t *testing.T) {
	ctx := context.Background()
	url := testenv.FreshURL(t, "sqlite")
	db, err := sqlstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, "sqlite", testenv.Options{DB: db})
	load := registerUnderLoad(t, env)
	before := load.atLeast(5) // some accounts in before the backup
	file := filepath.Join(t.TempDir(), "backup.db")
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"backup", file}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr)
	acked := load.stop()
	if code != 0 {
		t.Fatalf("gatehouse backup: exit %d, %s", code, stderr.String())
	}
	if code := run(ctx, []string{"backup", file}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url}), &stdout, &stderr); code == 0 {
		t.Error("a backup over an existing file: exit 0")
	}

	target := testenv.FreshURL(t, "sqlite")
	stderr.Reset()
	if code := run(ctx, []string{"restore", file}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": target}), &stdout, &stderr); code != 0 {
		t.Fatalf("gatehouse restore: exit %d, %s", code, stderr.String())
	}
	restored, err := sqlstore.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	back := testenv.New(t, "sqlite", testenv.Options{DB: restored})
	for _, a := range before {
		back.Login(t, a.Email, a.Password).Want(t, 200)
	}
	t.Logf("%d accounts acknowledged before the backup, %d in all", len(before), len(acked))
}

// TestRestoreRefusedWhileServing: restore refuses a database a server
// holds, and a file that is not a Gatehouse backup; backup and restore
// refuse PostgreSQL (pg_dump's job).
func TestRestoreRefusedWhileServing(t *testing.T) {
	ctx := context.Background()
	url := testenv.FreshURL(t, "sqlite")
	db, err := sqlstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	file := filepath.Join(t.TempDir(), "b.db")
	if err := sqlstore.Backup(ctx, url, file); err != nil {
		t.Fatal(err)
	}
	release, err := holdDatabase(url) // as serve does
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(ctx, url, file); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("restore while served: %v; want refused as in use", err)
	}
	release()
	if err := restore(ctx, url, file); err != nil {
		t.Errorf("restore once stopped: %v", err)
	}
	if err := restore(ctx, url, filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Error("restore of a missing file: no error")
	}
	for _, f := range []func() error{
		func() error { return sqlstore.Backup(ctx, "postgres://x/y", file) },
		func() error { return restore(ctx, "postgres://x/y", file) },
	} {
		if err := f(); err != sqlstore.ErrBackupPostgres {
			t.Errorf("PostgreSQL: %v; want %v", err, fmt.Sprint(sqlstore.ErrBackupPostgres))
		}
	}
}

// writeLoad registers accounts from two clients of one service until
// stopped, keeping every account whose registration was answered.
type writeLoad struct {
	mu    sync.Mutex
	acked []*testenv.Account
	done  chan struct{}
	wg    sync.WaitGroup
}

func registerUnderLoad(t *testing.T, env *testenv.Env) *writeLoad {
	l := &writeLoad{done: make(chan struct{})}
	for range 2 {
		l.wg.Go(func() {
			for {
				select {
				case <-l.done:
					return
				default:
				}
				a := env.Register(t)
				l.mu.Lock()
				l.acked = append(l.acked, a)
				l.mu.Unlock()
			}
		})
	}
	return l
}

// atLeast waits until n registrations were answered and returns those
// answered so far.
func (l *writeLoad) atLeast(n int) []*testenv.Account {
	for {
		l.mu.Lock()
		if len(l.acked) >= n {
			acked := slices.Clone(l.acked)
			l.mu.Unlock()
			return acked
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// stop ends the load and returns every answered registration.
func (l *writeLoad) stop() []*testenv.Account {
	close(l.done)
	l.wg.Wait()
	return l.acked
}
