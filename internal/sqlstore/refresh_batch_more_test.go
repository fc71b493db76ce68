package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
)

// A refresh whose client gives up while it waits in a batch fails alone,
// with its context's error, and rotates nothing (its token still works);
// the others in that batch are answered and rotated as usual.
func TestRefreshBatchMemberGivesUp(t *testing.T) { onEach(t, testRefreshBatchMemberGivesUp) }

func testRefreshBatchMemberGivesUp(t *testing.T, f *batchFixture) {
	x, xHash := f.session(t)
	y, yHash := f.session(t)
	release := f.db.HoldRefreshSlots()
	xctx, giveUp := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, _, err := f.st.RefreshOnce(xctx, x.ID, xHash, next(x.ID), policy)
		gaveUp <- err
	}()
	f.waitQueued(t, 1, release)
	stays := make(chan error, 1)
	yNext := next(y.ID)
	go func() {
		_, ok, err := f.st.RefreshOnce(context.Background(), y.ID, yHash, yNext, policy)
		if err == nil && !ok {
			err = errors.New("not rotated")
		}
		stays <- err
	}()
	f.waitQueued(t, 2, release)
	giveUp()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the refresh that gave up: error %v; want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Error("the refresh that gave up still waits for its batch")
	}
	release()
	if err := <-stays; err != nil {
		t.Errorf("the refresh that stayed in the batch: %v; want rotated", err)
	}
	if !f.live(t, y.ID, yNext.Hash) {
		t.Error("the successor of the refresh that stayed is not live")
	}
	if !f.live(t, x.ID, xHash) {
		t.Error("the token of the refresh that gave up was rotated; want it left live")
	}
}

// Many clients refresh at once, several of them presenting the same token
// of a session (two tabs, or a thief racing the owner), round after round,
// each taking the careful path's rotation when the batch rotated nothing
// for it, as identity's Refresh does: every token is rotated by exactly
// one of them, whose successor is the live one, and the history keeps
// every rotated token once. Run it with -race.
func TestRefreshBatchesRace(t *testing.T) { onEach(t, testRefreshBatchesRace) }

func testRefreshBatchesRace(t *testing.T, f *batchFixture) {
	const sessions, racers, rounds = 12, 3, 8
	var wg sync.WaitGroup
	for range sessions {
		ss, hash := f.session(t)
		wg.Go(func() {
			for round := range rounds {
				var won sync.Map // successor hash → true, for each racer that rotated
				var rw sync.WaitGroup
				for range racers {
					rw.Go(func() {
						n := next(ss.ID)
						_, ok, err := f.st.RefreshOnce(context.Background(), ss.ID, hash, n, policy)
						if err == nil && !ok {
							err = f.st.RotateRefresh(context.Background(), hash, n)
							ok = err == nil
							if errors.Is(err, gatehouse.ErrNotFound) {
								err = nil
							}
						}
						if err != nil {
							t.Errorf("session %s round %d: %v", ss.ID, round, err)
						}
						if ok {
							won.Store(n.Hash, true)
						}
					})
				}
				rw.Wait()
				var winners []string
				won.Range(func(k, _ any) bool { winners = append(winners, k.(string)); return true })
				if len(winners) != 1 {
					t.Errorf("session %s round %d: %d racers rotated the token; want exactly one", ss.ID, round, len(winners))
					return
				}
				if !f.live(t, ss.ID, winners[0]) {
					t.Errorf("session %s round %d: the winner's successor is not live", ss.ID, round)
					return
				}
				hash = winners[0]
			}
		})
	}
	wg.Wait()
	var kept, distinct int
	if err := f.db.DB().QueryRow(`SELECT count(*), count(DISTINCT token_hash) FROM refresh_history`).Scan(&kept, &distinct); err != nil {
		t.Fatal(err)
	}
	if kept != sessions*rounds || distinct != kept {
		t.Errorf("rotated tokens in the history = %d (%d distinct); want %d", kept, distinct, sessions*rounds)
	}
}
