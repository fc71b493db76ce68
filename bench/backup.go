package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// runBackup (-backup-rows N) times "gatehouse backup" of a large SQLite
// database while it serves writes: it seeds N audit entries (about 1 GiB
// at the default) before the server starts, drives refreshes (each a
// write) at -c connections, takes the backup in the middle of them, and
// reports the file's size, the backup's time, and the writes answered
// before and during it. The backup is then checked by "gatehouse restore"
// into a new file (quick_check and the schema).
func (b *bench) runBackup(ctx context.Context) error {
	bin, err := b.binary(ctx)
	if err != nil {
		return err
	}
	dbURL := "sqlite:" + filepath.Join(b.tmp, "backup-src.db")
	info := &dbInfo{kind: "sqlite", url: dbURL}
	if err := migrateDatabase(ctx, bin, dbURL); err != nil {
		return err
	}
	b.log.Printf("backup: seeding %d audit entries", b.cfg.backupRows)
	a, err := seedAudit(ctx, info, b.cfg.backupRows/10, b.cfg.backupRows, 50)
	if err != nil {
		return err
	}
	b.log.Printf("backup: seeded in %v (%s)", a.took.Round(time.Second), sqliteSize(dbURL))
	srv, err := startServer(ctx, "gatehouse (sqlite, backup)", bin, []string{"serve"}, gatehouseEnv(dbURL),
		filepath.Join(b.tmp, "gatehouse-backup.log"), time.Minute)
	if err != nil {
		return err
	}
	defer srv.stop()
	setup := newClient(8, time.Minute)
	defer setup.CloseIdleConnections()
	if err := waitHealthy(ctx, setup, srv.url, 30*time.Second); err != nil {
		return err
	}
	user := &benchUser{email: "backup-" + randomHex(4) + "@example.com", password: "pw-" + randomHex(10)}
	if err := register(ctx, setup, srv.url, user); err != nil {
		return err
	}
	e := &env{client: setup, baseURL: srv.url, workers: b.cfg.conns, user: user, db: info,
		logf: func(format string, args ...any) { b.log.Printf("backup: "+format, args...) }}
	var writer *runner
	for _, t := range targets() {
		if t.name == "refresh" {
			if writer, err = t.setup(ctx, e); err != nil {
				return err
			}
		}
	}

	// Writes answered, with their latencies, tagged by phase (0 before the
	// backup, 1 during it).
	var phase atomic.Int32
	var mu sync.Mutex
	lat := [2][]time.Duration{}
	var failures atomic.Uint64
	wctx, stop := context.WithCancel(ctx)
	client := newClient(b.cfg.conns, b.cfg.timeout)
	var wg sync.WaitGroup
	for w := range b.cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				req, err := writer.request(w)
				if err != nil {
					failures.Add(1)
					continue
				}
				p, began := phase.Load(), time.Now()
				status, body, err := do(wctx, client, req, writer.wantsBody())
				if wctx.Err() != nil {
					return
				}
				if err != nil || status/100 != 2 {
					failures.Add(1)
				} else {
					mu.Lock()
					lat[p] = append(lat[p], time.Since(began))
					mu.Unlock()
				}
				writer.response(w, status, body)
			}
		}()
	}
	const before = 10 * time.Second
	time.Sleep(before)
	file := filepath.Join(b.tmp, "backup.db")
	cmd := exec.CommandContext(ctx, bin, "backup", file)
	cmd.Env = gatehouseEnv(dbURL)
	phase.Store(1)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(began)
	stop()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("gatehouse backup: %v: %s", err, out)
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	restored := "sqlite:" + filepath.Join(b.tmp, "restored.db")
	check := exec.CommandContext(ctx, bin, "restore", file)
	check.Env = gatehouseEnv(restored)
	if out, err := check.CombinedOutput(); err != nil {
		return fmt.Errorf("gatehouse restore of the backup: %v: %s", err, out)
	}
	for p, name := range []string{"before", "during"} {
		d := lat[p]
		slices.Sort(d)
		window := before
		if p == 1 {
			window = took
		}
		if len(d) == 0 {
			b.log.Printf("backup: %s: no write answered", name)
			continue
		}
		b.log.Printf("backup: writes %s the backup: %d in %v (%.0f/s), p50 %v, p99 %v, max %v", name, len(d), window.Round(time.Millisecond),
			float64(len(d))/window.Seconds(), d[len(d)/2].Round(100*time.Microsecond), d[len(d)*99/100].Round(100*time.Microsecond), d[len(d)-1].Round(time.Millisecond))
	}
	b.log.Printf("backup: %s -> backup %.0f MiB in %v; %d failed writes; restore check passed", sqliteSize(dbURL), float64(st.Size())/(1<<20), took.Round(100*time.Millisecond), failures.Load())
	return srv.died()
}
