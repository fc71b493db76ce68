package sqlstore

import (
	"context"
	"sync"
	"time"
)

// sharedReadTimeout bounds a shared read on its own: the caller that runs
// it reads for the others too, so its context's end must not fail theirs.
const sharedReadTimeout = 10 * time.Second

// sharedReads lets concurrent reads of one key share one query that
// starts after every one of them asked. The first caller queues at the
// pool's gate; callers of the same key that arrive while it waits join
// it; when it gets its place the group closes, and only then does the
// query run. So each joined caller sees the rows as of a moment after it
// asked, exactly as its own query would have, and the pool serves one
// query instead of many. (Webhook deliveries to one receiver read the
// same webhook row at each try: under fan-out 50 workers queued for it.)
type sharedReads struct {
	mu      sync.Mutex
	waiting map[string]*sharedRead
}

type sharedRead struct {
	done chan struct{}
	val  any
	err  error
}

// do returns read's answer for key, sharing it as above. read runs with
// the gate's place held and must not pass the gate itself.
func (s *sharedReads) do(ctx context.Context, g gate, key string, read func(ctx context.Context) (any, error)) (any, error) {
	s.mu.Lock()
	if r := s.waiting[key]; r != nil {
		s.mu.Unlock()
		select {
		case <-r.done:
			return r.val, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.waiting == nil {
		s.waiting = map[string]*sharedRead{}
	}
	r := &sharedRead{done: make(chan struct{})}
	s.waiting[key] = r
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
	defer cancel()
	entered := g.enter(rctx)
	s.mu.Lock()
	delete(s.waiting, key) // later callers start a group of their own
	s.mu.Unlock()
	if entered {
		r.val, r.err = read(rctx)
		g.leave()
	} else {
		r.err = rctx.Err()
	}
	close(r.done)
	return r.val, r.err
}
