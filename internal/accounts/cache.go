package accounts

import (
	"sync"
	"time"
)

// shortCache holds values for at most cacheTTL, in memory, for the hottest
// reads (the user behind GET /v1/auth/verify, a tool-API token's live
// membership). Changes made through this instance drop entries at once;
// another instance's changes show within cacheTTL. It is bounded: when
// full it starts again empty.
type shortCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]cached[V]
}

type cached[V any] struct {
	v  V
	at time.Time
}

const (
	cacheTTL = 2 * time.Second
	cacheMax = 100_000
)

func (c *shortCache[K, V]) get(k K, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || now.Sub(e.at) >= cacheTTL || now.Before(e.at) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *shortCache[K, V]) put(k K, v V, now time.Time) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheMax {
		c.m = make(map[K]cached[V])
	}
	c.m[k] = cached[V]{v: v, at: now}
	c.mu.Unlock()
}

func (c *shortCache[K, V]) drop(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// clear drops every entry (a change that touches many keys, such as an
// org deletion).
func (c *shortCache[K, V]) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
