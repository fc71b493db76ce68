package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// policyCase is a sign-in session at the edge of the session policy:
// created and expiring (its stored end) relative to the refresh's time,
// perhaps revoked, and whether a refresh then may rotate its token.
type policyCase struct {
	name             string
	created, expires time.Duration // from the refresh's time
	revoked          bool
	refreshable      bool
}

// policy is the session policy of the case: numbers unlike the
// defaults, so a path that used constants of its own would answer
// otherwise.
var policy = identity.SessionPolicy{Idle: 2 * time.Hour, Absolute: 10 * time.Hour}

var policyCases = []policyCase{
	{"live", -time.Hour, time.Hour, false, true},
	{"idle bound: just inside", -time.Hour, time.Microsecond, false, true},
	{"idle bound: at its instant", -time.Hour, 0, false, false},
	{"idle-expired", -3 * time.Hour, -time.Minute, false, false},
	{"absolute bound: just inside", -policy.Absolute + time.Microsecond, time.Hour, false, true},
	{"absolute bound: at its instant", -policy.Absolute, time.Hour, false, false},
	// Its stored end is ahead (a longer policy set it): the absolute
	// bound alone refuses it.
	{"absolute-expired, idle end ahead", -2 * policy.Absolute, time.Hour, false, false},
	{"revoked", -time.Hour, time.Hour, true, false},
	{"revoked and idle-expired", -3 * time.Hour, -time.Minute, true, false},
}

// policySession stores the session of c for u, c's times taken from at,
// and returns it.
func policySession(t *testing.T, s Stores, u *gatehouse.User, c policyCase, at time.Time) *identity.Session {
	t.Helper()
	ctx := context.Background()
	ss := &identity.Session{ID: newID(), UserID: u.ID, Via: gatehouse.ViaPassword, CreatedAt: at.Add(c.created), ExpiresAt: at.Add(c.expires),
		LastUsedAt: at.Add(c.created), RefreshHash: newID()}
	wantErr(t, "CreateSession", s.Identity.CreateSession(ctx, ss), nil)
	if c.revoked {
		if _, err := s.Identity.RevokeSession(ctx, ss.ID, at.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		ss.RevokedAt = new(at.Add(-time.Second))
	}
	return ss
}

// testSessionPolicy: the refresh paths refuse exactly the same sessions
// under one identity.SessionPolicy, and a refresh they allow ends the
// session at the policy's End: the Go path (the store's RefreshSession
// read judged by SessionPolicy.Refreshable, then RotateRefresh to End),
// RefreshOnce alone, and a batch of refreshes in one statement
// (PostgreSQL; a store without one declines RefreshOnce and rotates
// nothing, and the Go path serves).
func testSessionPolicy(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	// check compares what a path did with session ss of case c to the
	// policy: rotated to next when refreshable, untouched otherwise.
	check := func(t *testing.T, c policyCase, ss *identity.Session, rotated bool, next *identity.RefreshToken, at time.Time) {
		t.Helper()
		if rotated != c.refreshable {
			t.Errorf("%s: rotated %v; want %v", c.name, rotated, c.refreshable)
			return
		}
		if !rotated {
			wantNotRotated(t, s, ss.ID, ss.RefreshHash, next)
			return
		}
		if end := policy.End(ss.CreatedAt, at); !next.ExpiresAt.Equal(end) {
			t.Errorf("%s: successor expires %v; want the policy's end %v", c.name, next.ExpiresAt, end)
		}
		wantRotated(t, s, ss.RefreshHash, next)
	}

	t.Run("the Go path", func(t *testing.T) {
		at := now()
		for _, c := range policyCases {
			ss := policySession(t, s, u, c, at)
			read, err := s.Identity.RefreshSession(ctx, ss.ID, ss.RefreshHash)
			if err != nil {
				t.Fatalf("%s: RefreshSession: %v", c.name, err)
			}
			next := &identity.RefreshToken{Hash: newID(), SessionID: ss.ID, CreatedAt: at, ExpiresAt: policy.End(read.Session.CreatedAt, at)}
			ok := policy.Refreshable(read.Session, at)
			if ok {
				wantErr(t, c.name+": RotateRefresh", s.Identity.RotateRefresh(ctx, ss.RefreshHash, next), nil)
			}
			check(t, c, ss, ok, next, at)
		}
	})

	t.Run("RefreshOnce", func(t *testing.T) {
		at := now()
		for _, c := range policyCases {
			ss := policySession(t, s, u, c, at)
			next := &identity.RefreshToken{Hash: newID(), SessionID: ss.ID, CreatedAt: at}
			read, ok, err := s.Identity.RefreshOnce(ctx, ss.ID, ss.RefreshHash, next, policy)
			if err != nil {
				t.Fatalf("%s: RefreshOnce: %v", c.name, err)
			}
			if s.RefreshAll == nil {
				if ok {
					t.Fatalf("%s: RefreshOnce rotated on a store without the one-statement refresh", c.name)
				}
				wantNotRotated(t, s, ss.ID, ss.RefreshHash, next)
				continue
			}
			if ok && !read.Session.ExpiresAt.Equal(next.ExpiresAt) {
				t.Errorf("%s: read session expires %v; successor %v", c.name, read.Session.ExpiresAt, next.ExpiresAt)
			}
			check(t, c, ss, ok, next, at)
		}
	})

	t.Run("a batch", func(t *testing.T) {
		if s.RefreshAll == nil {
			t.Skip("the store has no batched refresh")
		}
		at := now()
		var sids, hashes []string
		var nexts []*identity.RefreshToken
		var sessions []*identity.Session
		for _, c := range policyCases {
			ss := policySession(t, s, u, c, at)
			sessions = append(sessions, ss)
			sids, hashes = append(sids, ss.ID), append(hashes, ss.RefreshHash)
			nexts = append(nexts, &identity.RefreshToken{Hash: newID(), SessionID: ss.ID, CreatedAt: at})
		}
		reads, errs := s.RefreshAll(ctx, sids, hashes, nexts, policy)
		for i, c := range policyCases {
			if errs[i] != nil {
				t.Fatalf("%s: %v", c.name, errs[i])
			}
			if reads[i] != nil {
				nexts[i].ExpiresAt = reads[i].Session.ExpiresAt
			}
			check(t, c, sessions[i], reads[i] != nil, nexts[i], at)
		}
	})
}
