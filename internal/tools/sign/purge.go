package sign

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
)

// DefaultRetention is how long an ended document is kept before its
// purge when GATEHOUSE_SIGN_RETENTION is not set.
const DefaultRetention = 365 * 24 * time.Hour

// SetRetention sets how long after it ended (completed, voided, declined
// or expired) a document is purged; 0 means DefaultRetention.
func (s *Service) SetRetention(d time.Duration) {
	s.retention.Store(int64(max(d, 0)))
}

func (s *Service) keep() time.Duration {
	if d := time.Duration(s.retention.Load()); d > 0 {
		return d
	}
	return DefaultRetention
}

// EndedAt is when the document reached its final status; nil while it is
// a draft or pending.
func (d *Document) EndedAt() *time.Time {
	switch d.Status {
	case Completed:
		return d.CompletedAt
	case Voided:
		return d.VoidedAt
	case Declined:
		return d.DeclinedAt
	case Expired:
		return d.ExpiredAt
	}
	return nil
}

// ScheduledPurge is when the document's file and signing data will be
// purged: its end plus the retention; nil while it has not ended, while
// it is under legal hold, and once it is purged.
func (s *Service) ScheduledPurge(d *Document) *time.Time {
	end := d.EndedAt()
	if end == nil || d.LegalHold || d.PurgedAt != nil {
		return nil
	}
	at := end.Add(s.keep())
	return &at
}

// errPurged answers what a purge removed: the file, signing links, copies.
var errPurged = gatehouse.Errorf(gatehouse.KindGone, "this document's file and signing data were purged")

// purged refuses a document whose file and signing data are gone.
func purged(d *Document) error {
	if d.PurgedAt != nil {
		return errPurged
	}
	return nil
}

// PurgeDue purges every ended document whose retention has passed and
// which is not under legal hold: its PDF, field values (signatures
// included), decline reasons and signing tokens; the row stays as a
// tombstone its owner still lists. Each purge is a conditional UPDATE (not
// yet purged, not held, still due), so sweeps running at once on several
// instances purge a document once, and a hold set meanwhile wins. It
// returns how many documents this call purged.
func (s *Service) PurgeDue(ctx context.Context) (int, error) {
	return s.sweep(ctx, "find documents to purge", func(ctx context.Context, now time.Time, limit int) ([][2]string, error) {
		return s.store.PurgeableDocuments(ctx, now.Add(-s.keep()), limit)
	}, func(ctx context.Context, id, org string, now time.Time) (bool, error) {
		return s.purge(ctx, id, org, now.Add(-s.keep()), now)
	})
}

// purge purges one document of org if it is still due, with its audit
// entry (empty actor) in the same transaction.
func (s *Service) purge(ctx context.Context, id, org string, cutoff, now time.Time) (bool, error) {
	done := false
	err := s.store.Tx(ctx, func(tx Store) error {
		ok, err := tx.PurgeDocument(ctx, id, cutoff, now)
		if err != nil || !ok {
			return err
		}
		done = true
		return s.audit(ctx, tx, "", &Document{ID: id, OrgID: org}, "document.purged", map[string]any{})
	})
	if err != nil {
		return false, gatehouse.Internal("purge document", err)
	}
	return done, nil
}

// SetLegalHold sets or clears the owner's legal hold on a document: while
// it is set the document is never purged; once cleared, the next sweep
// purges it if its retention has passed.
func (s *Service) SetLegalHold(ctx context.Context, p *gatehouse.Principal, id string, hold bool) (*Document, error) {
	return s.change(ctx, p, id, func(tx Store, d *Document) ([]event, error) {
		if d.OwnerID != p.UserID {
			return nil, gatehouse.Errorf(gatehouse.KindForbidden, "only the document's owner can change its legal hold")
		}
		if err := purged(d); err != nil {
			return nil, err
		}
		if d.LegalHold == hold {
			return nil, nil
		}
		d.LegalHold = hold
		if err := tx.SetLegalHold(ctx, d.ID, hold); err != nil {
			return nil, gatehouse.Internal("set legal hold", err)
		}
		return nil, s.audit(ctx, tx, p.UserID, d, "document.legal_hold_changed", map[string]any{"legal_hold": hold})
	})
}
