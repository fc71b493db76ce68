package sqlstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Reads of one key that arrive while the first waits for the pool share
// its query; a read that arrives once that query has started does not
// join it (it could miss a change committed after the query began) and
// gets a query of its own.
func TestSharedReads(t *testing.T) {
	var s sharedReads
	g := make(gate, 1)
	g.enter(context.Background()) // the pool is busy
	var queries atomic.Int32
	started, release := make(chan struct{}, 2), make(chan struct{})
	read := func(context.Context) (any, error) {
		n := queries.Add(1)
		started <- struct{}{}
		<-release
		return n, nil
	}
	got := make([]any, 4)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = s.do(context.Background(), g, "k", read)
		}()
	}
	time.Sleep(50 * time.Millisecond) // all three queued behind the busy pool
	g.leave()
	<-started // the shared query runs
	wg.Add(1)
	go func() {
		defer wg.Done()
		got[3], _ = s.do(context.Background(), g, "k", read)
	}()
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if got[0] != int32(1) || got[1] != int32(1) || got[2] != int32(1) {
		t.Errorf("the three callers queued together got %v; want one shared query's answer (1)", got[:3])
	}
	if got[3] != int32(2) || queries.Load() != 2 {
		t.Errorf("the caller that came after the query started got %v after %d queries; want a query of its own (2)", got[3], queries.Load())
	}
}
