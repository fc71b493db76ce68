// Package cache is a short-lived in-memory cache for the hottest reads.
package cache

import (
	"sync"
	"time"
)

// Short holds values for at most TTL, in memory, for the hottest reads
// (the user behind GET /v1/auth/verify, a tool-API token's live
// membership). Changes made through this instance drop entries at once;
// another instance's changes show within TTL. It is bounded: when full it
// starts again empty. The zero value is ready to use.
type Short[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]cached[V]
}

type cached[V any] struct {
	v  V
	at time.Time
}

const (
	// TTL is how long an entry is served.
	TTL = 2 * time.Second
	max = 100_000
)

// Get returns k's value put less than TTL before now.
func (c *Short[K, V]) Get(k K, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || now.Sub(e.at) >= TTL || now.Before(e.at) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put stores v as k's value read at now.
func (c *Short[K, V]) Put(k K, v V, now time.Time) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= max {
		c.m = make(map[K]cached[V])
	}
	c.m[k] = cached[V]{v: v, at: now}
	c.mu.Unlock()
}

// Drop forgets k.
func (c *Short[K, V]) Drop(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// Clear drops every entry (a change that touches many keys, such as an
// org deletion).
func (c *Short[K, V]) Clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
