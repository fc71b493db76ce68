package sqlstore_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The SQLite writer does not checkpoint the WAL itself (that stalled the
// request whose commit crossed the threshold): after a commit of more
// pages than SQLite's automatic checkpoint allows, they are in the WAL
// only. The checkpoint rounds copy them into the database beside the
// writers, and a round after one that saw no new writes truncates the WAL
// file.
func TestCheckpointsOffTheWriter(t *testing.T) {
	url := testenv.FreshURL(t, "sqlite")
	db := open(t, url)
	db.StopCheckpointLoop()
	path := strings.TrimPrefix(url, "sqlite:")
	exec(t, db, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
	const rows = 1500 // pages, above the automatic checkpoint's 1000
	writePages(t, db, rows)
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if s := size(path); s >= rows*4000 {
		t.Fatalf("database file after the commit = %d bytes; want the rows in the WAL only (the writer checkpointed)", s)
	}
	left := db.CheckpointRound(-1)
	if s := size(path); s < rows*4000 {
		t.Errorf("database file after a round = %d bytes; want the rows copied into it", s)
	}
	db.CheckpointRound(left)
	if s := size(path + "-wal"); s != 0 {
		t.Errorf("WAL after a round with no new writes = %d bytes; want it truncated", s)
	}
	var n int
	if err := db.DB().QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != rows {
		t.Errorf("rows after the checkpoints = %d, %v; want %d", n, err, rows)
	}
}

// On a server that never stops writing the rounds never truncate the WAL
// (that waits for a round with no writes): a burst that grew it past
// walSizeLimit is cut back to the limit by the first commit after a round
// emptied it, instead of the file keeping its high-water size.
func TestWALSizeBoundedWhileBusy(t *testing.T) {
	const limit = 1 << 20
	sqlstore.SetWALSizeLimit(t, limit)
	url := testenv.FreshURL(t, "sqlite")
	db := open(t, url)
	db.StopCheckpointLoop()
	wal := strings.TrimPrefix(url, "sqlite:") + "-wal"
	exec(t, db, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
	const rows = 1500 // about 6 MB of WAL in one commit
	writePages(t, db, rows)
	burst, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	db.CheckpointRound(-1) // a busy round: never the idle truncation
	exec(t, db, `INSERT INTO t (k, v) VALUES (-1, 'next')`)
	after, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() > limit {
		t.Errorf("WAL after the burst's checkpoint and one more commit = %d bytes (burst %d); want at most the limit, %d",
			after.Size(), burst.Size(), limit)
	}
}

// A round holds the writer's gate (while it syncs the WAL and the
// database file, no write commits) only once the WAL is restartFrames
// long: a round below it does not wait for a write transaction in
// progress, one above it does.
func TestCheckpointStopsWritersOnlyForLongWAL(t *testing.T) {
	sqlstore.SetRestartFrames(t, 100)
	db := open(t, testenv.FreshURL(t, "sqlite"))
	db.StopCheckpointLoop()
	exec(t, db, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
	// round runs a round while a write transaction holds the writer and
	// reports whether it finished before the transaction did.
	round := func(rows int) bool {
		db.CheckpointRound(-1) // the WAL starts over at the next write
		exec(t, db, `DELETE FROM t`)
		for i := range rows {
			exec(t, db, `INSERT INTO t (k, v) VALUES ($1, $2)`, i, strings.Repeat("x", 4000))
		}
		started, release, txDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			txDone <- db.InTx(context.Background(), func(exec func(ctx context.Context, query string, args ...any) error) error {
				close(started)
				<-release
				return exec(context.Background(), `INSERT INTO t (k, v) VALUES (-1, 'held')`)
			})
		}()
		<-started
		roundDone := make(chan struct{})
		go func() { db.CheckpointRound(-1); close(roundDone) }()
		var first bool
		select {
		case <-roundDone:
			first = true
		case <-time.After(time.Second):
		}
		close(release)
		if err := <-txDone; err != nil {
			t.Fatal(err)
		}
		<-roundDone
		return first
	}
	if !round(10) {
		t.Errorf("a round with a WAL under restartFrames waited for the writer")
	}
	if round(150) {
		t.Errorf("a round with a WAL over restartFrames did not wait for the writer (the WAL would never start over)")
	}
}

// writePages writes rows rows of table t (k, v) of a page each in one
// transaction.
func writePages(t *testing.T, db *sqlstore.DB, rows int) {
	t.Helper()
	err := db.InTx(context.Background(), func(exec func(ctx context.Context, query string, args ...any) error) error {
		for i := range rows {
			if err := exec(context.Background(), `INSERT INTO t (k, v) VALUES ($1, $2)`, i, strings.Repeat("x", 4000)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every commit syncs the WAL (synchronous FULL, 2) unless the URL names
// its own setting, as the tests' databases do (NORMAL, 1).
func TestSQLiteSynchronous(t *testing.T) {
	url := testenv.FreshURL(t, "sqlite")
	for _, tc := range []struct {
		url  string
		want int
	}{{url, 2}, {url + "?_pragma=synchronous(NORMAL)", 1}} {
		db := open(t, tc.url)
		var got int
		if err := db.DB().QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if got != tc.want {
			t.Errorf("%s: synchronous %d; want %d", tc.url, got, tc.want)
		}
	}
}
