package storetest

import (
	"context"
	"errors"
	"github.com/gatehouse/gatehouse"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// rotateFunc rotates the token hashed hash to next through one of the two
// paths a refresh takes.
type rotateFunc func(s Stores, hash string, next *identity.RefreshToken) error

// rotatePaths are the three: in one round trip with the read where the
// store can (RefreshOnce, PostgreSQL; the refresh then falls back to the
// other paths, as here), on its own (a sign-in session's refresh, on
// PostgreSQL one statement) and inside a transaction (an OAuth refresh, or
// one that must find the user a new home org).
var rotatePaths = []struct {
	name   string
	rotate rotateFunc
}{
	{"in one round trip", func(s Stores, hash string, next *identity.RefreshToken) error {
		read, ok, err := s.Identity.RefreshOnce(context.Background(), next.SessionID, hash, next, identity.SessionPolicy{Idle: 2 * time.Hour, Absolute: 100 * 365 * 24 * time.Hour})
		if err != nil || ok {
			if ok && (read.Session.ID != next.SessionID || read.User == nil || read.User.ID != read.Session.UserID) {
				return errors.New("RefreshOnce read another session or no user")
			}
			return err
		}
		return s.Identity.RotateRefresh(context.Background(), hash, next)
	}},
	{"alone", func(s Stores, hash string, next *identity.RefreshToken) error {
		return s.Identity.RotateRefresh(context.Background(), hash, next)
	}},
	{"in a transaction", func(s Stores, hash string, next *identity.RefreshToken) error {
		return s.Identity.Tx(context.Background(), func(tx identity.Store) error { return tx.RotateRefresh(context.Background(), hash, next) })
	}},
}

func testRotateRefresh(t *testing.T, s Stores) {
	for _, p := range rotatePaths {
		t.Run(p.name, func(t *testing.T) {
			t.Run("rotates once", func(t *testing.T) { testRotateOnce(t, s, p.rotate) })
			t.Run("refuses a dead token or session", func(t *testing.T) { testRotateRefused(t, s, p.rotate) })
			t.Run("one of concurrent rotations wins", func(t *testing.T) { testRotateRace(t, s, p.rotate) })
		})
	}
	t.Run("a rolled back transaction rotates nothing", func(t *testing.T) { testRotateRollback(t, s) })
}

// successor returns the token that replaces one of session ss at.
func successor(ss *identity.Session, at time.Time) *identity.RefreshToken {
	return &identity.RefreshToken{Hash: newID(), SessionID: ss.ID, CreatedAt: at, ExpiresAt: at.Add(2 * time.Hour)}
}

// wantRotated checks the state a rotation of old to next leaves.
func wantRotated(t *testing.T, s Stores, old string, next *identity.RefreshToken) {
	t.Helper()
	ctx := context.Background()
	prev, err := s.Identity.RefreshToken(ctx, next.SessionID, old)
	if err != nil || prev.RotatedAt == nil || !prev.RotatedAt.Equal(next.CreatedAt) {
		t.Fatalf("rotated token = %+v, %v; want rotated at %v", prev, err, next.CreatedAt)
	}
	got, err := s.Identity.RefreshToken(ctx, next.SessionID, next.Hash)
	if err != nil || got.SessionID != next.SessionID || !got.ExpiresAt.Equal(next.ExpiresAt) || got.RotatedAt != nil {
		t.Fatalf("successor = %+v, %v; want %+v", got, err, next)
	}
	ss, err := s.Identity.SessionByID(ctx, next.SessionID)
	if err != nil || !ss.LastUsedAt.Equal(next.CreatedAt) || !ss.ExpiresAt.Equal(next.ExpiresAt) {
		t.Fatalf("session = %+v, %v; want used at %v and expiring at %v", ss, err, next.CreatedAt, next.ExpiresAt)
	}
}

// wantNotRotated checks that a refused rotation of old, session sid's
// token, to next changed neither token.
func wantNotRotated(t *testing.T, s Stores, sid, old string, next *identity.RefreshToken) {
	t.Helper()
	ctx := context.Background()
	if prev, err := s.Identity.RefreshToken(ctx, sid, old); err != nil || prev.RotatedAt != nil {
		t.Errorf("token after a refused rotation = %+v, %v; want it unrotated", prev, err)
	}
	if got, err := s.Identity.RefreshToken(ctx, next.SessionID, next.Hash); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("successor of a refused rotation = %+v, %v; want ErrNotFound", got, err)
	}
}

func testRotateOnce(t *testing.T, s Stores, rotate rotateFunc) {
	ss, rt := newSession(t, s, newUser(t, s))
	next := successor(ss, now())
	wantErr(t, "rotate", rotate(s, rt.Hash, next), nil)
	wantRotated(t, s, rt.Hash, next)

	again := successor(ss, now())
	wantErr(t, "rotate a rotated token", rotate(s, rt.Hash, again), gatehouse.ErrNotFound)
	if got, err := s.Identity.RefreshToken(context.Background(), ss.ID, again.Hash); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("successor of a rotated token = %+v, %v; want ErrNotFound", got, err)
	}

	third := successor(ss, now().Add(time.Second))
	wantErr(t, "rotate the successor", rotate(s, next.Hash, third), nil)
	wantRotated(t, s, next.Hash, third)
}

func testRotateRefused(t *testing.T, s Stores, rotate rotateFunc) {
	ctx := context.Background()
	u := newUser(t, s)

	t.Run("expired token", func(t *testing.T) {
		at := now()
		ss := &identity.Session{ID: newID(), UserID: u.ID, Via: gatehouse.ViaPassword, CreatedAt: at.Add(-2 * time.Hour), ExpiresAt: at,
			LastUsedAt: at.Add(-2 * time.Hour), RefreshHash: newID()}
		wantErr(t, "CreateSession", s.Identity.CreateSession(ctx, ss), nil)
		next := successor(ss, at)
		wantErr(t, "rotate an expired token", rotate(s, ss.RefreshHash, next), gatehouse.ErrNotFound)
		wantNotRotated(t, s, ss.ID, ss.RefreshHash, next)
	})
	t.Run("revoked session", func(t *testing.T) {
		ss, rt := newSession(t, s, u)
		if _, err := s.Identity.RevokeSession(ctx, ss.ID, now()); err != nil {
			t.Fatal(err)
		}
		next := successor(ss, now())
		wantErr(t, "rotate a revoked session's token", rotate(s, rt.Hash, next), gatehouse.ErrNotFound)
		wantNotRotated(t, s, ss.ID, rt.Hash, next)
	})
	t.Run("another session's token", func(t *testing.T) {
		mine, rt := newSession(t, s, u)
		other, _ := newSession(t, s, u)
		next := successor(other, now())
		wantErr(t, "rotate another session's token", rotate(s, rt.Hash, next), gatehouse.ErrNotFound)
		wantNotRotated(t, s, mine.ID, rt.Hash, next)
	})
}

func testRotateRace(t *testing.T, s Stores, rotate rotateFunc) {
	ctx := context.Background()
	ss, rt := newSession(t, s, newUser(t, s))
	at := now()
	nexts := make([]*identity.RefreshToken, racers)
	for i := range nexts {
		nexts[i] = successor(ss, at)
	}
	race(t, racers, func(i int) error { return rotate(s, rt.Hash, nexts[i]) })
	stored := 0
	for _, next := range nexts {
		if _, err := s.Identity.RefreshToken(ctx, ss.ID, next.Hash); err == nil {
			stored++
		} else if !errors.Is(err, gatehouse.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if stored != 1 {
		t.Errorf("%d successors stored; want 1", stored)
	}
}

// testRotateRollback: a rotation is undone with the transaction it ran in,
// as when an OAuth refresh finds its grant revoked after rotating.
func testRotateRollback(t *testing.T, s Stores) {
	ctx := context.Background()
	ss, rt := newSession(t, s, newUser(t, s))
	next := successor(ss, now())
	errCheck := errors.New("check failed")
	err := s.Identity.Tx(ctx, func(tx identity.Store) error {
		if err := tx.RotateRefresh(ctx, rt.Hash, next); err != nil {
			return err
		}
		return errCheck
	})
	wantErr(t, "transaction", err, errCheck)
	wantNotRotated(t, s, ss.ID, rt.Hash, next)
	wantErr(t, "rotate after the rollback", s.Identity.RotateRefresh(ctx, rt.Hash, successor(ss, now())), nil)
}
