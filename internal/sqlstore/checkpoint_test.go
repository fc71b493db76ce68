package sqlstore_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The SQLite writer does not checkpoint the WAL itself (that stalled the
// request whose commit crossed the threshold); the checkpoint rounds copy
// it into the database beside the writers, and a round after one that saw
// no new writes truncates the WAL file.
func TestCheckpointsOffTheWriter(t *testing.T) {
	url := testenv.FreshURL(t, "sqlite")
	db := open(t, url)
	wal := strings.TrimPrefix(url, "sqlite:") + "-wal"
	exec(t, db, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
	for i := range 300 {
		exec(t, db, `INSERT INTO t (k, v) VALUES ($1, $2)`, i, strings.Repeat("x", 4000))
	}
	size := func() int64 {
		fi, err := os.Stat(wal)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if s := size(); s < 300*4000 {
		t.Fatalf("WAL after 300 writes of 4 kB = %d bytes; want them all there (the writer checkpointed it)", s)
	}
	left := db.CheckpointRound(-1)
	if left <= 0 {
		t.Fatalf("frames after a round with writes = %d; want the WAL kept for the next writes", left)
	}
	db.CheckpointRound(left)
	if s := size(); s != 0 {
		t.Errorf("WAL after a round with no new writes = %d bytes; want it truncated", s)
	}
	var n int
	if err := db.DB().QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 300 {
		t.Errorf("rows after the checkpoints = %d, %v; want 300", n, err)
	}
}
