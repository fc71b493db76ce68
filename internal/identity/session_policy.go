package identity

import "time"

// SessionPolicy is the lifetime of a session, one value read by every
// path that ends or extends one: the Go refresh (liveRefresh, then
// RotateRefresh with End), the first end of a sign-in or grant session,
// the tokens bound to a session's end, and the store's one-statement
// refresh (Store.RefreshOnce; on PostgreSQL sqlstore's refreshMany, which
// takes these numbers as parameters). A rule added here (max_age,
// auth_time, offline_access) is added once; the storage conformance suite
// checks that both refresh paths refuse the same sessions.
type SessionPolicy struct {
	// Idle is how long a session lives past its last refresh (RefreshTTL).
	Idle time.Duration
	// Absolute is how long a session lives past its sign-in however it is
	// refreshed (GATEHOUSE_SESSION_MAX_AGE).
	Absolute time.Duration
}

// AbsoluteEnd is when a session created at created ends however it is
// refreshed.
func (p SessionPolicy) AbsoluteEnd(created time.Time) time.Time { return created.Add(p.Absolute) }

// End is when a session created at created, used at now, ends: Idle after
// now, never past its absolute end.
func (p SessionPolicy) End(created, now time.Time) time.Time {
	end := now.Add(p.Idle)
	if abs := p.AbsoluteEnd(created); abs.Before(end) {
		return abs
	}
	return end
}

// Refreshable reports whether sess may be refreshed at now: not revoked,
// before its end (its expiry, which the last refresh set from End) and
// before its absolute end (checked again because the setting may have
// been lowered since).
func (p SessionPolicy) Refreshable(sess *Session, now time.Time) bool {
	return sess.RevokedAt == nil && now.Before(sess.ExpiresAt) && now.Before(p.AbsoluteEnd(sess.CreatedAt))
}
