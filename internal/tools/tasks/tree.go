package tasks

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// parent checks that parentID is a live issue of the same team that is not
// i itself nor one of its descendants.
func (s *Service) parent(ctx context.Context, tx Store, p *gatehouse.Principal, i *Issue, parentID string) error {
	bad := gatehouse.Invalid("parentId is not a live issue of the same team")
	if !gatehouse.IsID(parentID) || parentID == i.ID {
		return bad
	}
	par, err := tx.Issue(ctx, p.OrgID, parentID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return bad
	}
	if err != nil {
		return gatehouse.Internal("find parent", err)
	}
	if par.TeamID != i.TeamID || par.DeletedAt != nil {
		return bad
	}
	below, err := tx.Subtree(ctx, i.ID)
	if err != nil {
		return gatehouse.Internal("subtree", err)
	}
	for _, id := range below {
		if id == parentID {
			return gatehouse.Invalid("parentId would make the issue its own ancestor")
		}
	}
	return nil
}

// Delete soft-deletes a live issue and its whole sub-issue subtree.
func (s *Service) Delete(ctx context.Context, p *gatehouse.Principal, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		i, err := s.locked(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if i.DeletedAt != nil {
			return errIssueNotFound
		}
		below, err := tx.Subtree(ctx, i.ID)
		if err != nil {
			return gatehouse.Internal("subtree", err)
		}
		now := s.clock.Now()
		if err := tx.SetDeleted(ctx, append([]string{i.ID}, below...), &now, now); err != nil {
			return gatehouse.Internal("delete issue", err)
		}
		return s.audit(ctx, tx, p, i, "deleted", map[string]any{"number": i.Number, "subtree": len(below)})
	})
}

// Restore brings back a soft-deleted issue with its whole sub-issue
// subtree, sub-issues deleted separately earlier included (spec 3).
func (s *Service) Restore(ctx context.Context, p *gatehouse.Principal, id string) (*Issue, error) {
	var out *Issue
	err := s.store.Tx(ctx, func(tx Store) error {
		i, err := s.locked(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if i.DeletedAt == nil {
			return gatehouse.Errorf(gatehouse.KindNotFound, "issue is not deleted")
		}
		below, err := tx.Subtree(ctx, i.ID)
		if err != nil {
			return gatehouse.Internal("subtree", err)
		}
		if err := tx.SetDeleted(ctx, append([]string{i.ID}, below...), nil, s.clock.Now()); err != nil {
			return gatehouse.Internal("restore issue", err)
		}
		if err := s.audit(ctx, tx, p, i, "restored", map[string]any{"number": i.Number, "subtree": len(below)}); err != nil {
			return err
		}
		out, err = tx.Issue(ctx, p.OrgID, i.ID)
		return err
	})
	return out, err
}
