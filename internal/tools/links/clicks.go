package links

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// claimBatch bounds the links one Announce reads at a time.
const claimBatch = 100

// Announce turns the clicks counted on each link since its last
// link.clicked event into one new event (clicks, and the running
// totalClicks), whichever instance took them. The redirect counts a
// click in the same UPDATE as its total (no write of its own); here each
// link's unreported clicks are taken off and the event queued in one
// transaction that locks the link, so two Announce runs at once report
// each click once, and a crash loses none. A schedule calls it every
// click window on one instance; it returns how many events it queued.
func (s *Service) Announce(ctx context.Context) (int, error) {
	if s.events == nil {
		return 0, nil
	}
	n := 0
	for {
		ids, err := s.store.UnreportedLinks(ctx, claimBatch)
		if err != nil {
			return n, gatehouse.Internal("find clicked links", err)
		}
		for _, id := range ids {
			ok, err := s.announce(ctx, id)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if len(ids) < claimBatch {
			return n, nil
		}
	}
}

// announce queues the link.clicked event of one link's unreported clicks,
// if it still has any.
func (s *Service) announce(ctx context.Context, id string) (bool, error) {
	done := false
	err := s.store.Tx(ctx, func(tx Store) error {
		l, clicks, err := tx.ClaimClicks(ctx, id)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && clicks == 0) {
			return nil // deleted, or announced by another run meanwhile
		}
		if err != nil {
			return gatehouse.Internal("claim clicks", err)
		}
		done = true
		return s.emit(ctx, tx, l.OrgID, "link.clicked", map[string]any{"link": map[string]any{"id": l.ID, "shortCode": l.ShortCode},
			"clicks": clicks, "totalClicks": l.Clicks})
	})
	return done, err
}

// Flush announces the clicks counted so far, at once (tests).
func (s *Service) Flush() error {
	_, err := s.Announce(context.Background())
	return err
}
