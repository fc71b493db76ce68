package ratelimit

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// SharedFrom is the fastest refill a shared limiter has: a limiter adding
// a token more often than once a second is a flood guard on a hot path
// (token refresh, key exchange, MCP requests), kept in memory so those
// requests take no database write; the guess guards (sign-in, sign-up,
// links, lockout) refill once a second or slower and are shared.
const SharedFrom = time.Second

// StoreTimeout bounds one call to the Store; past it, or on any error of
// the store, a limiter answers from its own memory (the per-instance
// limit) rather than refusing everyone or letting everyone through.
const StoreTimeout = time.Second

// Store keeps the buckets a deployment's instances share, each as one
// instant: its theoretical arrival time (GCRA), the time at which the
// bucket is full again. A bucket of burst b refilling one token per every
// holds (b·every − (tat − now)) / every tokens, so taking one is moving
// tat on by every, allowed while tat − now stays within b·every. Keys come
// hashed (Shared.key); instants are the callers' clock.
type Store interface {
	// TakeLimit moves key's tat to max(tat, now) + every unless that passes
	// limit (now + burst·every); taken reports whether it moved, and tat
	// is the instant it holds after the call (zero: no row).
	TakeLimit(ctx context.Context, key string, now, limit time.Time, every time.Duration) (tat time.Time, taken bool, err error)
	// LimitTAT is key's tat (zero: no row, a full bucket).
	LimitTAT(ctx context.Context, key string) (time.Time, error)
	// ResetLimit forgets key (a full bucket).
	ResetLimit(ctx context.Context, key string) error
}

// Shared makes Limiters whose buckets live in a Store. A nil *Shared makes
// in-memory Limiters (SQLite, where one process owns the database, or
// tests).
type Shared struct {
	store  Store
	secret []byte
	scope  string
	log    *slog.Logger
	// warned is the unix second of the last store failure logged.
	warned atomic.Int64
}

// NewShared returns the Shared of store. Keys are stored as an HMAC under
// a key derived from master (the deployment's encryption key), so the
// table holds no address or account a reader could recover, not even by
// trying every IPv4 address; scope (the deployment's job queue) keeps
// deployments sharing one database apart. log may be nil.
func NewShared(store Store, master []byte, scope string, log *slog.Logger) (*Shared, error) {
	if len(master) == 0 {
		return nil, errors.New("ratelimit: no key")
	}
	secret, err := hkdf.Key(sha256.New, master, nil, "gatehouse ratelimit v1", 32)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Shared{store: store, secret: secret, scope: scope, log: log}, nil
}

// New returns the limiter called name allowing burst requests per key at
// once and one more per every, its buckets in the store when every is
// SharedFrom or slower, else in memory. now may be nil (time.Now).
func (s *Shared) New(name string, burst int, every time.Duration, now func() time.Time) *Limiter {
	l := New(burst, every, now)
	if s != nil && every >= SharedFrom {
		l.shared, l.name = s, name
	}
	return l
}

// key is what the store keeps for key of limiter name: 128 bits of an
// HMAC, base64url.
func (s *Shared) key(name, key string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(s.scope))
	m.Write([]byte{0})
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write([]byte(key))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// errLocal tells take to answer from memory.
var errLocal = errors.New("ratelimit: not shared")

// take is Limiter.take on the store; an error means the caller answers
// from memory.
func (s *Shared) take(l *Limiter, key string, consume bool) (bool, time.Duration, error) {
	if s == nil || l.shared == nil {
		return false, 0, errLocal
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	now := l.now()
	span := time.Duration(l.burst) * l.every
	limit := now.Add(span)
	k := s.key(l.name, key)
	var tat time.Time
	var err error
	if consume {
		var taken bool
		tat, taken, err = s.store.TakeLimit(ctx, k, now, limit, l.every)
		if err == nil && taken {
			return true, 0, nil
		}
	} else {
		tat, err = s.store.LimitTAT(ctx, k)
	}
	if err != nil {
		s.failed(err)
		return false, 0, err
	}
	next := tat
	if now.After(next) {
		next = now
	}
	next = next.Add(l.every)
	if !next.After(limit) {
		return true, 0, nil
	}
	return false, next.Sub(limit), nil
}

// reset forgets key in the store.
func (s *Shared) reset(l *Limiter, key string) {
	if s == nil || l.shared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	if err := s.store.ResetLimit(ctx, s.key(l.name, key)); err != nil {
		s.failed(err)
	}
}

// failed logs a store failure, at most once a second.
func (s *Shared) failed(err error) {
	now := time.Now().Unix()
	if last := s.warned.Load(); last != now && s.warned.CompareAndSwap(last, now) {
		s.log.Warn("shared rate limits unavailable, limiting per instance", "err", err)
	}
}
