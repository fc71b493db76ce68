// Package ratelimit holds token buckets keyed by a string (a client IP, an
// account), for the abuse limits of unauthenticated endpoints: in memory,
// or in a Store every instance of a deployment shares (shared.go).
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter is a set of token buckets with one rate and burst. The zero value
// is not usable; a nil *Limiter allows everything.
type Limiter struct {
	mu      sync.Mutex
	every   time.Duration // one token is added per every
	burst   float64
	now     func() time.Time
	buckets map[string]*bucket
	sweep   time.Time
	// shared keeps the buckets in a Store under name (shared.go); the
	// buckets above then only answer while the store fails.
	shared *Shared
	name   string
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Limiter allowing burst requests at once and one more per
// every. now may be nil (time.Now).
func New(burst int, every time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{every: every, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// Allow takes one token from key's bucket. When none is left it reports
// false and how long until one is.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	return l.take(key, true)
}

// Check reports whether key's bucket has a token, without taking it.
func (l *Limiter) Check(key string) (bool, time.Duration) {
	return l.take(key, false)
}

// Reset fills key's bucket again, as if it had not been used.
func (l *Limiter) Reset(key string) {
	if l == nil {
		return
	}
	l.shared.reset(l, key)
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
}

func (l *Limiter) take(key string, consume bool) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	if ok, wait, err := l.shared.take(l, key, consume); err == nil {
		return ok, wait
	}
	return l.local(key, consume)
}

// local answers from the in-memory buckets.
func (l *Limiter) local(key string, consume bool) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.gc(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
	b.at = now
	if b.tokens >= 1 {
		if consume {
			b.tokens--
		}
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) * float64(l.every))
	return false, wait
}

// gc drops full buckets once a minute so memory tracks active keys only.
func (l *Limiter) gc(now time.Time) {
	if now.Sub(l.sweep) < time.Minute {
		return
	}
	l.sweep = now
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(l.every) >= l.burst {
			delete(l.buckets, k)
		}
	}
}
