package webhooks

import (
	"context"
	"sync"
	"time"
)

// Bounds on the deliveries in flight on one instance, so that one
// workspace, or one slow receiver, holds a share of the job engine's 100
// workers and never all of them (docs/decisions.md).
const (
	InFlightPerWorkspace = 50
	InFlightPerHost      = 60
	// movingWithin: a workspace or receiver at its limit one of whose
	// deliveries ended this recently is moving, and a delivery waits up
	// to slotWait for its place; else (a receiver that holds them all)
	// it is snoozed at once, and the worker is free for others.
	movingWithin = 100 * time.Millisecond
	slotWait     = 250 * time.Millisecond
)

// inFlight counts the deliveries being tried on this instance by
// workspace and by receiver (host and port).
type inFlight struct {
	mu     sync.Mutex
	byOrg  map[string]*flying
	byHost map[string]*flying
	// freed is closed, and replaced, whenever a delivery ends.
	freed chan struct{}
}

// flying is one workspace's or receiver's deliveries in flight.
type flying struct {
	n    int
	last time.Time // when one last ended
}

func newInFlight() inFlight {
	return inFlight{byOrg: map[string]*flying{}, byHost: map[string]*flying{}, freed: make(chan struct{})}
}

// take holds a place for a delivery of org to host: nil, or ErrBusy when
// either is at its limit and not moving, ErrMoving when still at it after
// slotWait.
func (f *inFlight) take(ctx context.Context, org, host string) error {
	deadline := time.Now().Add(slotWait)
	for {
		f.mu.Lock()
		o, h := f.byOrg[org], f.byHost[host]
		fullOrg, fullHost := o != nil && o.n >= InFlightPerWorkspace, h != nil && h.n >= InFlightPerHost
		if !fullOrg && !fullHost {
			f.byOrg[org], f.byHost[host] = add(o, 1), add(h, 1)
			f.mu.Unlock()
			return nil
		}
		now := time.Now()
		moving := (!fullOrg || now.Sub(o.last) < movingWithin) && (!fullHost || now.Sub(h.last) < movingWithin)
		freed := f.freed
		f.mu.Unlock()
		if !moving {
			return ErrBusy
		}
		if !now.Before(deadline) {
			return ErrMoving
		}
		t := time.NewTimer(deadline.Sub(now))
		select {
		case <-freed:
			t.Stop()
		case <-t.C:
			return ErrMoving
		case <-ctx.Done():
			t.Stop()
			return ErrMoving
		}
	}
}

// stuck reports whether org is at its limit and not moving: its
// delivery is snoozed before its webhook is even read.
func (f *inFlight) stuck(org string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.byOrg[org]
	return o != nil && o.n >= InFlightPerWorkspace && time.Since(o.last) >= movingWithin
}

// release gives back the place take held.
func (f *inFlight) release(org, host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	for _, m := range []struct {
		byKey map[string]*flying
		key   string
	}{{f.byOrg, org}, {f.byHost, host}} {
		x := m.byKey[m.key]
		if x.n--; x.n <= 0 {
			delete(m.byKey, m.key)
		} else {
			x.last = now
		}
	}
	close(f.freed)
	f.freed = make(chan struct{})
}

// add counts d more in x (nil: none yet).
func add(x *flying, d int) *flying {
	if x == nil {
		x = &flying{}
	}
	x.n += d
	return x
}
