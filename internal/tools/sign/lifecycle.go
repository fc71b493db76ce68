package sign

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
)

// sweepBatch bounds the documents one expiry sweep reads at a time.
const sweepBatch = 100

// expiry checks a create's expiresAt: absent, or in the future.
func expiry(at *time.Time, now time.Time) (*time.Time, error) {
	if at == nil {
		return nil, nil
	}
	if !at.After(now) {
		return nil, gatehouse.Invalid("document.expiresAt must be in the future")
	}
	t := at.UTC()
	return &t, nil
}

// ExpireDue marks each pending document whose expiresAt has passed
// expired and queues its document.expired event in the same transaction.
// The mark is a conditional UPDATE (still pending), so when sweeps run at
// once on several instances each document expires, and its event fires,
// once. It returns how many documents this call expired.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	return s.sweep("find expiring documents", func(now time.Time) ([][2]string, error) {
		return s.store.ExpiringDocuments(ctx, now, sweepBatch)
	}, func(id, org string, now time.Time) (bool, error) {
		return s.expire(ctx, id, org, now)
	})
}

// expire expires one document of org if it is still pending.
func (s *Service) expire(ctx context.Context, id, org string, now time.Time) (bool, error) {
	done := false
	err := s.store.Tx(ctx, func(tx Store) error {
		ok, err := tx.ExpireDocument(ctx, id, now)
		if err != nil || !ok {
			return err
		}
		d, err := tx.Document(ctx, org, id, false, false)
		if err != nil {
			return err
		}
		done = true
		if err := s.audit(ctx, tx, "", d, "document.expired", map[string]any{}); err != nil {
			return err
		}
		return s.send(ctx, tx, d, []event{{name: "document.expired"}})
	})
	if err != nil {
		return false, gatehouse.Internal("expire document", err)
	}
	return done, nil
}
