package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// A read by key (PasskeyOwner) runs its statement under a context that
// cannot end, yet its caller giving up still takes it out of the queue
// for the reader: it fails at once with its context's error, and a read
// after it runs as usual.
func TestKeyReadGivesUpWaiting(t *testing.T) {
	db := open(t, testenv.FreshURL(t, "sqlite"))
	release := db.HoldReaders()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() {
		_, err := db.Identity().PasskeyOwner(ctx, []byte("no such credential"))
		out <- err
	}()
	cancel()
	select {
	case err := <-out:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the read whose caller gave up: %v; want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		release()
		t.Fatal("the read whose caller gave up still waits for the reader")
	}
	release()
	if _, err := db.Identity().PasskeyOwner(context.Background(), []byte("no such credential")); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("a read afterwards: %v; want %v", err, gatehouse.ErrNotFound)
	}
}
