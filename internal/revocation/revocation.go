// Package revocation keeps, in memory, what was revoked recently enough
// that an access token of it may still be unexpired: sessions (sign-ins
// and OAuth grants), API keys, accounts, workspaces and memberships. Every
// bearer token is checked against it (identity.Authenticate), so a
// revocation is refused on every route of every instance within one poll
// of the database, without a read per request.
package revocation

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// What a revocation names (the kind column of the revocations table).
const (
	KindSession = "session" // Subject: the session id (token claim sid)
	KindKey     = "key"     // Subject: the API key id (token claim key_id)
	KindUser    = "user"    // Subject: the deleted account (token sub)
	KindOrg     = "org"     // Subject: the deleted workspace (token org.id)
	KindMember  = "member"  // Subject: the user removed from OrgID
)

// Entry is one revocation as stored.
type Entry struct {
	Kind    string
	Subject string
	OrgID   string
	At      time.Time
}

// Source reads the revocations recorded at or after since.
type Source interface {
	RevokedSince(ctx context.Context, since time.Time) ([]Entry, error)
}

// Token is what a bearer token says it came from.
type Token struct {
	SessionID string
	KeyID     string
	Subject   string
	OrgID     string
	IssuedAt  time.Time
}

const (
	// Keep is how long an entry is kept: longer than any access token
	// lives (1 h), so every token it could refuse has expired by then.
	Keep = time.Hour + 5*time.Minute
	// Overlap is how far back each poll looks before the previous one:
	// it covers transactions that commit after a poll read past their
	// stamp, and instance clocks that disagree by less than it.
	Overlap = 30 * time.Second
	// Every is the default poll interval.
	Every = time.Second
)

// List is the in-memory revocation list of one instance.
type List struct {
	src   Source
	now   func() time.Time
	log   *slog.Logger
	every time.Duration

	snap atomic.Pointer[snapshot]
	mu   sync.Mutex // serializes polls
	last time.Time  // clock reading of the last successful poll
}

type memberKey struct{ user, org string }

// snapshot is immutable once published: readers take it without a lock.
type snapshot struct {
	ids     map[string]time.Time // session, key, user and org ids (UUIDs, unique across kinds)
	members map[memberKey]time.Time
	pruned  time.Time
}

// New returns a List reading src every every (0: Every) on the clock now.
func New(src Source, now func() time.Time, every time.Duration, log *slog.Logger) *List {
	if every <= 0 {
		every = Every
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	l := &List{src: src, now: now, log: log, every: every}
	l.snap.Store(&snapshot{ids: map[string]time.Time{}, members: map[memberKey]time.Time{}})
	return l
}

// Refused reports whether t names something revoked. A membership only
// refuses tokens issued before or in the second of the removal (a token's
// iat has whole seconds), so a member added back gets working tokens.
func (l *List) Refused(t Token) bool {
	s := l.snap.Load()
	if len(s.ids) == 0 && len(s.members) == 0 {
		return false
	}
	for _, id := range [...]string{t.SessionID, t.KeyID, t.Subject, t.OrgID} {
		if _, ok := s.ids[id]; ok && id != "" {
			return true
		}
	}
	at, ok := s.members[memberKey{t.Subject, t.OrgID}]
	return ok && !t.IssuedAt.After(at)
}

// Run loads the revocations of the last Keep, then polls until ctx ends.
// The first load's error is returned; later ones are logged and retried.
func (l *List) Run(ctx context.Context) {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		if err := l.Sync(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("revocation list not refreshed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync reads the revocations recorded since the last poll (less Overlap;
// the last Keep the first time) and publishes them. The store calls it
// after committing a revocation, so this instance refuses at once.
func (l *List) Sync(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	since := now.Add(-Keep)
	if !l.last.IsZero() && l.last.Add(-Overlap).After(since) {
		since = l.last.Add(-Overlap)
	}
	es, err := l.src.RevokedSince(ctx, since)
	if err != nil {
		return err
	}
	l.last = now
	if next := l.snap.Load().with(es, now); next != nil {
		l.snap.Store(next)
	}
	return nil
}

// with returns s with es added and, once a minute, entries older than
// Keep dropped; nil when nothing changed.
func (s *snapshot) with(es []Entry, now time.Time) *snapshot {
	prune := now.Sub(s.pruned) >= time.Minute
	var fresh []Entry
	for _, e := range es {
		if !s.has(e) {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) == 0 && !prune {
		return nil
	}
	next := &snapshot{ids: make(map[string]time.Time, len(s.ids)+len(fresh)), members: make(map[memberKey]time.Time, len(s.members)), pruned: s.pruned}
	if prune {
		next.pruned = now
	}
	cut := now.Add(-Keep)
	keep := func(at time.Time) bool { return !prune || at.After(cut) }
	for id, at := range s.ids {
		if keep(at) {
			next.ids[id] = at
		}
	}
	for k, at := range s.members {
		if keep(at) {
			next.members[k] = at
		}
	}
	for _, e := range fresh {
		if e.Kind == KindMember {
			k := memberKey{e.Subject, e.OrgID}
			if e.At.After(next.members[k]) {
				next.members[k] = e.At
			}
			continue
		}
		if _, ok := next.ids[e.Subject]; !ok {
			next.ids[e.Subject] = e.At
		}
	}
	return next
}

func (s *snapshot) has(e Entry) bool {
	if e.Kind == KindMember {
		at, ok := s.members[memberKey{e.Subject, e.OrgID}]
		return ok && !at.Before(e.At)
	}
	_, ok := s.ids[e.Subject]
	return ok
}
