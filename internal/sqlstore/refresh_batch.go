package sqlstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// refreshBatchMax is the most refreshes one statement carries.
const refreshBatchMax = 64

// refreshSlots is how many refresh statements one instance runs at once
// on PostgreSQL: one per two cores. Measured on 2 cores with 32 clients,
// one slot served 5,400–5,800 refreshes/s at p99 13 ms, two 4,100–4,900
// at 16–19 ms, four 3,700 at 23 ms: fewer statements carry more
// rotations each, and each commit's flush and process wake-ups are shared
// by more of them.
func refreshSlots(cores int) int { return max(1, cores/2) }

// refreshBatches lets the refreshes that queue together share one
// statement, one commit and one round trip (PostgreSQL). A refresh that
// finds a free slot runs alone, at once, as before. One that finds none
// opens a batch and waits for a slot; refreshes of other sessions that
// arrive meanwhile join it; when it gets the slot the batch closes and
// runs, and each member gets its own row (or none: nothing rotated, and
// it takes the careful path). Like sharedReads, a batch starts after every
// member asked, so each sees the rows as its own statement would have.
type refreshBatches struct {
	slots chan struct{}
	mu    sync.Mutex
	open  *refreshGroup // the batch that waits for a slot; nil: none
}

type refreshGroup struct {
	calls []*refreshCall
	sids  map[string]bool
	done  chan struct{} // closed when every call has its answer
}

// refreshCall is one refresh: the session, the presented token's hash,
// its successor and the session's absolute lifetime; read and err are
// its answer (read nil: nothing rotated).
type refreshCall struct {
	sid, hash string
	next      *identity.RefreshToken
	maxAge    time.Duration
	read      *identity.RefreshRead
	err       error
}

func newRefreshBatches(slots int) *refreshBatches {
	return &refreshBatches{slots: make(chan struct{}, slots)}
}

// do runs c on s, alone or in a batch, and returns its answer.
func (b *refreshBatches) do(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	b.mu.Lock()
	if o := b.open; o != nil {
		switch {
		case o.sids[c.sid]:
			// Another refresh of this session waits already: at most one
			// of them can rotate its token, and the careful path tells
			// this one what happened.
			b.mu.Unlock()
			return nil, nil
		case len(o.calls) < refreshBatchMax:
			o.calls = append(o.calls, c)
			o.sids[c.sid] = true
			b.mu.Unlock()
			select {
			case <-o.done:
				return c.read, c.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b.mu.Unlock()
		return b.alone(ctx, s, c)
	}
	select {
	case b.slots <- struct{}{}:
		b.mu.Unlock()
		return b.run(ctx, s, c)
	default:
	}
	o := &refreshGroup{calls: []*refreshCall{c}, sids: map[string]bool{c.sid: true}, done: make(chan struct{})}
	b.open = o
	b.mu.Unlock()
	// The batch runs for every member, so the first one's end must not
	// end it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
	defer cancel()
	select {
	case b.slots <- struct{}{}:
		b.closeOpen()
		s.runRefreshes(rctx, o.calls)
		<-b.slots
	case <-rctx.Done():
		b.closeOpen()
		for _, c := range o.calls {
			c.err = rctx.Err()
		}
	}
	close(o.done)
	return c.read, c.err
}

// closeOpen closes the open batch to newcomers, who open one of their own.
func (b *refreshBatches) closeOpen() {
	b.mu.Lock()
	b.open = nil
	b.mu.Unlock()
}

// alone runs c by itself, when a slot is free: the open batch is full.
func (b *refreshBatches) alone(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.run(ctx, s, c)
}

// run runs c by itself in the slot taken for it, and frees the slot.
func (b *refreshBatches) run(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	defer func() { <-b.slots }()
	s.runRefreshes(ctx, []*refreshCall{c})
	return c.read, c.err
}

// runRefreshes runs calls at the pool's gate and sets their answers.
func (s *Identity) runRefreshes(ctx context.Context, calls []*refreshCall) {
	if !s.db.wgate.enter(ctx) {
		for _, c := range calls {
			c.err = ctx.Err()
		}
		return
	}
	defer s.db.wgate.leave()
	s.refreshAll(ctx, calls)
}

// refreshAll runs calls as one refreshBatch, or one by one when that
// fails, and sets their answers. A token the history already holds is not
// rotated: the careful path deals with it.
func (s *Identity) refreshAll(ctx context.Context, calls []*refreshCall) {
	reads, err := s.refreshBatch(ctx, calls)
	if err != nil && len(calls) > 1 {
		for _, c := range calls {
			s.refreshAll(ctx, []*refreshCall{c})
		}
		return
	}
	if errors.Is(err, gatehouse.ErrConflict) {
		err = nil
	}
	for _, c := range calls {
		c.read, c.err = reads[c.sid], err
	}
}
