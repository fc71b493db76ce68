package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A caller queued behind a full pool gives up when its context ends, and
// a place freed goes to the caller that waited.
func TestGate(t *testing.T) {
	g := make(gate, 1)
	if !g.enter(context.Background()) {
		t.Fatal("enter an empty gate: false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := (gated{g: g}).ExecContext(ctx, "SELECT 1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exec behind a full gate = %v; want the context's deadline", err)
	}
	entered := make(chan bool)
	go func() { entered <- g.enter(context.Background()) }()
	select {
	case <-entered:
		t.Fatal("entered a full gate")
	case <-time.After(20 * time.Millisecond):
	}
	g.leave()
	if !<-entered {
		t.Fatal("the waiting caller did not get the freed place")
	}
}

// An unbounded pool gets no gate, and its callers never wait.
func TestGateUnbounded(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := newGate(db)
	for range 3 {
		if !g.enter(context.Background()) {
			t.Fatal("enter an unbounded gate: false")
		}
	}
	g.leave()
}
