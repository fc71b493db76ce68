// Package revocation keeps, in memory, what was revoked recently enough
// that an access token of it may still be unexpired: sessions (sign-ins
// and OAuth grants), API keys, accounts, workspaces and memberships. Every
// bearer token is checked against it (identity.Authenticate), so a
// revocation is refused on every route of every instance within one poll
// of the database, without a read per request.
//
// The list is a snapshot that readers take without a lock or an
// allocation: a large immutable base (two maps) and a small overlay of
// what was added since the base was built (recent.go: an open-addressing
// table whose slots are atomic pointers, written by one writer at a time
// and read lock-free). A revoking transaction of this instance hands its
// entries to Add after it commits (the INSERT returns them; no read), in
// O(1): the entry goes into the overlay. The overlay is merged into a new
// base when it holds half as many entries as the base (by the poll, or by
// Add when it is full), so a merge's O(n) copy is paid once per n adds.
// The poll (Sync, every second) reads what other instances revoked and
// drops, once a minute, what is older than Keep.
package revocation

import (
	"context"
	"log/slog"
	"math/bits"
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
	// KindBefore refuses the tokens of Subject (the token's sub: an
	// account, or the org key an org key's tokens name) issued at or before At, and none
	// issued after: a disabled account's key-exchange tokens, which no
	// session revocation reaches, without refusing those the account gets
	// once enabled again.
	KindBefore = "before"
	// KindPolicy revokes no token: Subject is PolicyPrefix and OrgID, an
	// org that began requiring two-factor, whose cached standings
	// (workspace.ToolAccess) are then read again (PolicyRaised).
	KindPolicy = "policy"
)

// PolicyPrefix starts the Subject of a KindPolicy entry, so that it never
// equals a token's ids (Refused).
const PolicyPrefix = "policy:"

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
	// policy is the latest At (unix nanoseconds) of a KindPolicy entry
	// added, so that PolicyRaised answers most calls without a lookup.
	policy atomic.Int64
	// before is, like policy, the latest At of a KindBefore entry added,
	// so that Refused looks for one only within Keep of it.
	before atomic.Int64
	mu     sync.Mutex // serializes the writers of snap and of its overlay
	poll   sync.Mutex // serializes polls
	last   time.Time  // clock reading of the last successful poll (under poll)
}

// memberKey names a membership (user and org) or, with org "", the
// subject of a KindBefore entry: both refuse only the tokens issued up to
// their time.
type memberKey struct{ user, org string }

// timed reports whether e refuses by issue time (a membership or a
// KindBefore entry), keyed by memberKey rather than by its subject alone.
func (e *Entry) timed() bool { return e.Kind == KindMember || e.Kind == KindBefore }

// snapshot's maps are immutable once published; its overlay only gains
// entries (under List.mu). Readers take both without a lock.
type snapshot struct {
	ids     map[string]time.Time    // session, key, user and org ids (UUIDs, unique across kinds)
	members map[memberKey]time.Time // memberships, and KindBefore entries under org ""
	pruned  time.Time
	recent  *overlay
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
	l.snap.Store(&snapshot{ids: map[string]time.Time{}, members: map[memberKey]time.Time{}, recent: newOverlay(0)})
	return l
}

// Refused reports whether t names something revoked. A membership only
// refuses tokens issued before or in the second of the removal (a token's
// iat has whole seconds), so a member added back gets working tokens; so
// does a KindBefore entry for its account or key.
func (l *List) Refused(t Token) bool {
	s := l.snap.Load()
	if len(s.ids) == 0 && len(s.members) == 0 && s.recent.n.Load() == 0 {
		return false
	}
	for _, id := range [...]string{t.SessionID, t.KeyID, t.Subject, t.OrgID} {
		if id == "" {
			continue
		}
		if _, ok := s.ids[id]; ok {
			return true
		}
		if _, e := s.recent.find(false, id, ""); e != nil {
			return true
		}
	}
	if s.issuedBy(memberKey{t.Subject, t.OrgID}, t.IssuedAt) {
		return true
	}
	if at := l.before.Load(); at == 0 || l.now().Sub(time.Unix(0, at)) > Keep {
		return false // no KindBefore entry listed
	}
	return s.issuedBy(memberKey{t.Subject, ""}, t.IssuedAt)
}

// issuedBy reports whether s holds a timed entry for k at or after iat.
func (s *snapshot) issuedBy(k memberKey, iat time.Time) bool {
	at, ok := s.members[k]
	if _, e := s.recent.find(true, k.user, k.org); e != nil && e.At.After(at) {
		at, ok = e.At, true
	}
	return ok && !iat.After(at)
}

// PolicyRaised reports whether org orgID began requiring two-factor less
// than Keep ago (a KindPolicy entry): a standing cached before that may
// be stale, however recent.
func (l *List) PolicyRaised(orgID string) bool {
	if at := l.policy.Load(); at == 0 || l.now().Sub(time.Unix(0, at)) > Keep {
		return false // none listed
	}
	s := l.snap.Load()
	id := PolicyPrefix + orgID
	if _, ok := s.ids[id]; ok {
		return true
	}
	_, e := s.recent.find(false, id, "")
	return e != nil
}

// Add publishes entries this instance just committed, at once and without
// a read: the store calls it after a revoking transaction commits (other
// instances see them at their next poll). Its cost does not grow with the
// list's size, but for the merge it pays once per as many adds as the
// list holds.
func (l *List) Add(es ...Entry) {
	if len(es) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(es)
}

// add puts es into the overlay, merging it into a new base first when it
// is full. Under l.mu.
func (l *List) add(es []Entry) {
	s := l.snap.Load()
	for _, e := range es {
		if e.Kind == KindPolicy && e.At.UnixNano() > l.policy.Load() {
			l.policy.Store(e.At.UnixNano())
		}
		if e.Kind == KindBefore && e.At.UnixNano() > l.before.Load() {
			l.before.Store(e.At.UnixNano())
		}
		if s.has(e) {
			continue
		}
		if s.recent.full() {
			s = s.merged(l.now(), false)
			l.snap.Store(s)
		}
		s.recent.put(e)
	}
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
// the last Keep the first time) and publishes them; once a minute it
// drops what is older than Keep, and it merges a half-full overlay into
// the base, so that Add seldom has to.
func (l *List) Sync(ctx context.Context) error {
	l.poll.Lock()
	defer l.poll.Unlock()
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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(es)
	s := l.snap.Load()
	if prune := now.Sub(s.pruned) >= time.Minute; prune || s.recent.halfFull() {
		l.snap.Store(s.merged(now, prune))
	}
	return nil
}

// merged returns a new snapshot whose base holds s's base and overlay
// (less, when prune, what is older than Keep) and whose overlay is empty.
func (s *snapshot) merged(now time.Time, prune bool) *snapshot {
	n := s.recent.n.Load()
	next := &snapshot{ids: make(map[string]time.Time, len(s.ids)+int(n)), members: make(map[memberKey]time.Time, len(s.members)), pruned: s.pruned}
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
	for i := range s.recent.slots {
		e := s.recent.slots[i].Load()
		if e == nil || !keep(e.At) {
			continue
		}
		if e.timed() {
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
	next.recent = newOverlay(len(next.ids) + len(next.members))
	return next
}

// has reports whether s already refuses what e names.
func (s *snapshot) has(e Entry) bool {
	member := e.timed()
	_, r := s.recent.find(member, e.Subject, e.OrgID)
	if member {
		at, ok := s.members[memberKey{e.Subject, e.OrgID}]
		return (ok && !at.Before(e.At)) || (r != nil && !r.At.Before(e.At))
	}
	_, ok := s.ids[e.Subject]
	return ok || r != nil
}

// pow2 is the least power of two >= n (n >= 1).
func pow2(n int) int { return 1 << bits.Len(uint(n-1)) }
