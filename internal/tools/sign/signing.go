package sign

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
)

// errBadToken answers any signing token that does not name a live link:
// the public side of Sign is reached by token, not by a signed-in member.
var errBadToken = gatehouse.Errorf(gatehouse.KindNotFound, "signing link not found")

// public runs fn on the document and recipient of a signing token, locked.
func (s *Service) public(ctx context.Context, token string, fn func(tx Store, d *Document, r *Recipient) ([]event, error)) (*Document, *Recipient, error) {
	if token == "" || len(token) > 100 || !utf8.ValidString(token) {
		return nil, nil, errBadToken
	}
	var d *Document
	var r *Recipient
	err := s.store.Tx(ctx, func(tx Store) error {
		var err error
		d, r, err = tx.RecipientByToken(ctx, token)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errBadToken
		}
		if err != nil {
			return gatehouse.Internal("find recipient", err)
		}
		if d.Status == Draft {
			return gatehouse.Errorf(gatehouse.KindGone, "this document has not been sent for signature")
		}
		if d.Status != Pending {
			return gatehouse.Errorf(gatehouse.KindGone, "this document is %s and can no longer be signed", d.Status)
		}
		evs, err := fn(tx, d, r)
		if err != nil {
			return err
		}
		return s.send(ctx, tx, d, evs)
	})
	if err != nil {
		return nil, nil, err
	}
	return d, r, nil
}

// View is a recipient's view; the first one fires document.viewed.
func (s *Service) View(ctx context.Context, token string) (*Document, *Recipient, error) {
	return s.public(ctx, token, func(tx Store, d *Document, r *Recipient) ([]event, error) {
		if r.ViewedAt != nil {
			return nil, nil
		}
		now := s.clock.Now()
		r.ViewedAt = &now
		if r.Status == ToSign {
			r.Status = Viewed
		}
		if err := tx.UpdateRecipient(ctx, r); err != nil {
			return nil, gatehouse.Internal("record view", err)
		}
		return []event{{name: "document.viewed", recipient: r}}, nil
	})
}

// Sign fills the recipient's fields and signs; the last signer completes
// the document.
func (s *Service) Sign(ctx context.Context, token string, values map[string]string) (*Document, *Recipient, error) {
	return s.public(ctx, token, func(tx Store, d *Document, r *Recipient) ([]event, error) {
		if r.Role != Signer {
			return nil, gatehouse.Errorf(gatehouse.KindForbidden, "a cc recipient does not sign")
		}
		if r.Status == Signed {
			return nil, gatehouse.Errorf(gatehouse.KindConflict, "you have already signed this document")
		}
		mine := map[string]*Field{}
		for _, f := range d.Fields {
			if f.RecipientID == r.ID {
				mine[f.ID] = f
			}
		}
		for id, v := range values {
			if mine[id] == nil {
				return nil, gatehouse.Invalid("field %q is not one of yours", id)
			}
			if len(v) > MaxValue || !gatehouse.CleanText(v) {
				return nil, gatehouse.Invalid("the value of field %q is too long or not text", id)
			}
		}
		for id, f := range mine {
			v, ok := values[id]
			if f.Required && (!ok || strings.TrimSpace(v) == "") {
				return nil, gatehouse.Invalid("field %q (%s) is required", id, f.Type)
			}
			if ok {
				if err := tx.SetFieldValue(ctx, id, &v); err != nil {
					return nil, gatehouse.Internal("fill field", err)
				}
				f.Value = &v
			}
		}
		now := s.clock.Now()
		r.Status, r.SignedAt = Signed, &now
		if r.ViewedAt == nil {
			r.ViewedAt = &now
		}
		if err := tx.UpdateRecipient(ctx, r); err != nil {
			return nil, gatehouse.Internal("sign", err)
		}
		evs := []event{{name: "document.signed", recipient: r}}
		done := true
		for _, x := range d.Recipients {
			if x.Role == Signer && x.ID != r.ID && x.Status != Signed {
				done = false
			}
		}
		if done {
			d.Status, d.CompletedAt, d.Modified = Completed, &now, now
			if err := tx.UpdateDocument(ctx, d); err != nil {
				return nil, gatehouse.Internal("complete document", err)
			}
			evs = append(evs, event{name: "document.completed"})
		}
		return evs, s.audit(ctx, tx, "", d, "document.signed", map[string]any{"recipient_id": r.ID})
	})
}

// Decline declines for the recipient, which declines the document.
func (s *Service) Decline(ctx context.Context, token, reason string) (*Document, *Recipient, error) {
	if len(reason) > MaxMessage {
		return nil, nil, gatehouse.Invalid("reason is longer than %d bytes", MaxMessage)
	}
	return s.public(ctx, token, func(tx Store, d *Document, r *Recipient) ([]event, error) {
		if r.Role != Signer {
			return nil, gatehouse.Errorf(gatehouse.KindForbidden, "a cc recipient does not sign")
		}
		if r.Status == Signed {
			return nil, gatehouse.Errorf(gatehouse.KindConflict, "you have already signed this document")
		}
		now := s.clock.Now()
		r.Status, r.DeclinedAt, r.DeclineReason = Refused, &now, strings.TrimSpace(reason)
		if err := tx.UpdateRecipient(ctx, r); err != nil {
			return nil, gatehouse.Internal("decline", err)
		}
		d.Status, d.DeclinedAt, d.Modified = Declined, &now, now
		if err := tx.UpdateDocument(ctx, d); err != nil {
			return nil, gatehouse.Internal("decline document", err)
		}
		return []event{{name: "document.declined", recipient: r}}, s.audit(ctx, tx, "", d, "document.declined", map[string]any{"recipient_id": r.ID})
	})
}
