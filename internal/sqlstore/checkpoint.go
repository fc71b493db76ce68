package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointEvery is how often the SQLite WAL is checkpointed: the WAL
// holds about this long of writes.
const checkpointEvery = time.Second

// restartFrames is how long the WAL grows (in frames, pages of 4 kB)
// before a checkpoint round holds the writer's gate to start it over.
// That part syncs the WAL and the database file (two syncs, about 19 ms
// on this repository's disk, up to 128 ms measured under load) while no
// write can commit; held every second it stalled about 2% of a busy
// server's writes, enough to set their p99. 4096 frames (16 MiB) stay
// well under walSizeLimit.
var restartFrames = 4096

// checkpoints copies the SQLite WAL into the database file beside the
// requests, on a connection of its own (the writer's automatic checkpoints
// are off, see openSQLite). Each round checkpoints what it can while
// writers go on (PASSIVE). Once the WAL is restartFrames long, the round
// then checkpoints, holding the writer's gate, the few frames written
// meanwhile: only then is the whole WAL in the database, so that the next
// write starts the WAL over instead of growing it. A round that finds
// nothing new written since the last truncates the WAL file.
type checkpoints struct {
	conn *sql.DB
	gate gate
	stop chan struct{}
	done chan struct{}
	once sync.Once // close: views of one DB share it
}

// startCheckpoints opens a connection to the SQLite database at url and
// checkpoints through it every checkpointEvery until stopped.
func startCheckpoints(url string, g gate) (*checkpoints, error) {
	dsn, err := sqliteDSN(url)
	if err != nil {
		return nil, err
	}
	// A checkpoint that would wait for readers gives up soon instead: it
	// holds the writer's gate, and the next round tries again.
	conn, err := sql.Open("sqlite", dsn+"&_pragma=busy_timeout(100)")
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetConnMaxIdleTime(0)
	conn.SetConnMaxLifetime(0)
	c := &checkpoints{conn: conn, gate: g, stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

func (c *checkpoints) loop() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	last := -1
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		last = c.round(last)
	}
}

// round checkpoints once; last is the WAL's length in frames the round
// before left (-1: none yet), and it returns the one this round leaves.
func (c *checkpoints) round(last int) int {
	ctx := context.Background()
	_, frames, done, err := c.checkpoint(ctx, "PASSIVE")
	if err != nil || frames <= 0 {
		return frames
	}
	mode := "PASSIVE"
	switch {
	case frames == last && done == frames:
		// Nothing written for a round and all of it in the database: give
		// the disk back.
		mode = "TRUNCATE"
	case frames < restartFrames:
		return frames // not yet worth stopping the writers for
	}
	c.gate.enter(ctx)
	_, frames, _, _ = c.checkpoint(ctx, mode)
	c.gate.leave()
	return frames
}

// checkpoint runs PRAGMA wal_checkpoint(mode): whether it could not
// finish (busy), the WAL's frames and how many of them are in the
// database. frames is -1 when the database is not in WAL mode.
func (c *checkpoints) checkpoint(ctx context.Context, mode string) (busy bool, frames, done int, err error) {
	err = c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &done)
	return busy, frames, done, err
}

// close stops the rounds and closes the connection.
func (c *checkpoints) close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return c.conn.Close()
}
