package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// testLogoutJobs: a write that ends a grant session queues its
// back-channel logout in its own transaction (none when it rolls back),
// once per session; signing out a sign-in session queues one for each
// live grant session approved from it; a sign-in session with no grant
// behind it, or another user's, queues nothing.
func testLogoutJobs(t *testing.T, s Stores) {
	if s.PendingJobs == nil {
		t.Skip("the store has no job queue to count")
	}
	ctx := context.Background()
	jobs := func() int {
		t.Helper()
		n, err := s.PendingJobs(ctx, oauth.LogoutJobKind)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := func(what string, n int) {
		t.Helper()
		if got := jobs(); got != n {
			t.Fatalf("after %s: %d logout jobs queued; want %d", what, got, n)
		}
	}
	u, other := newUser(t, s), newUser(t, s)
	signin, _ := newSession(t, s, u)
	otherSignin, _ := newSession(t, s, other)
	g := &identity.Grant{ID: newID(), UserID: u.ID, ClientID: "client-" + newID(), OrgID: newID(), CreatedAt: now(), AAL: "aal1", SessionID: signin.ID}
	wantErr(t, "CreateGrant", s.Identity.CreateGrant(ctx, g), nil)
	grantSession := func() *identity.Session {
		at := now()
		ss := &identity.Session{ID: newID(), UserID: u.ID, Via: gatehouse.ViaOAuth, GrantID: g.ID, OrgID: g.OrgID, CreatedAt: at,
			ExpiresAt: at.Add(time.Hour), LastUsedAt: at, RefreshHash: newID()}
		wantErr(t, "CreateSession", s.Identity.CreateSession(ctx, ss), nil)
		return ss
	}
	g1 := grantSession()
	grantSession() // g2: told when the sign-in ends, ended with the grant
	want("nothing ended", 0)

	rollback := errors.New("roll back")
	err := s.Identity.Tx(ctx, func(tx identity.Store) error {
		if _, err := tx.RevokeSession(ctx, g1.ID, now()); err != nil {
			return err
		}
		return rollback
	})
	wantErr(t, "rolled-back revocation", err, rollback)
	want("a rolled-back revocation", 0)

	if ok, err := s.Identity.RevokeSession(ctx, g1.ID, now()); err != nil || !ok {
		t.Fatalf("RevokeSession = %v, %v", ok, err)
	}
	want("a grant session revoked", 1)
	if ok, err := s.Identity.RevokeSession(ctx, g1.ID, now()); err != nil || ok {
		t.Fatalf("RevokeSession again = %v, %v; want false", ok, err)
	}
	want("a revoked session revoked again", 1)
	if ok, err := s.Identity.RevokeSession(ctx, otherSignin.ID, now()); err != nil || !ok {
		t.Fatalf("RevokeSession (another user's sign-in) = %v, %v", ok, err)
	}
	want("another user's sign-in session ended", 1)
	if ok, err := s.Identity.RevokeSession(ctx, signin.ID, now()); err != nil || !ok {
		t.Fatalf("RevokeSession (sign-in) = %v, %v", ok, err)
	}
	want("the approving sign-in session ended (g2 told; g1 already ended)", 2)
	wantErr(t, "RevokeGrant", s.Identity.RevokeGrant(ctx, u.ID, g.ID, now()), nil)
	want("the grant revoked (g2 ends)", 3)
}
