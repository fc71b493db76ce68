package forms

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/maillimit"
	"github.com/gatehouse/gatehouse/internal/token"

	"golang.org/x/text/language"
)

// ConfirmTTL is how long a destination's confirmation link works.
const ConfirmTTL = 7 * 24 * time.Hour

// Destination is where submissions go: type "email" with config.to.
type Destination struct {
	ID, FormID, Type string
	To               []string
	// Confirmed lists the addresses of To that receive submissions: a
	// member's verified address at creation, or one whose recipient
	// followed the confirmation link.
	Confirmed []string
	Created   time.Time
}

// Unconfirmed lists the addresses of To still waiting for confirmation.
func (d *Destination) Unconfirmed() []string {
	out := []string{}
	for _, to := range d.To {
		if !slices.Contains(d.Confirmed, to) && !slices.Contains(out, to) {
			out = append(out, to)
		}
	}
	return out
}

// Recipient is one address of an email destination and its confirmation.
type Recipient struct {
	DestinationID, FormID, OrgID, Email string
	// TokenHash is the SHA-256 hex of the confirmation link's secret; ""
	// once confirmed.
	TokenHash   string
	ExpiresAt   time.Time
	ConfirmedAt *time.Time
	// MailedAt is when the confirmation link was mailed; nil when none was.
	MailedAt *time.Time
}

// Destinations lists a form's destinations.
func (s *Service) Destinations(ctx context.Context, p *gatehouse.Principal, id string) ([]*Destination, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := s.store.ListDestinations(ctx, f.ID)
	if err != nil {
		return nil, gatehouse.Internal("list destinations", err)
	}
	return out, nil
}

// DestinationInput is the body of a destination create.
type DestinationInput struct {
	Type   *string `json:"type"`
	Config *struct {
		To []string `json:"to"`
	} `json:"config"`
}

// newDestination validates a destination create.
func (s *Service) newDestination(formID string, in *DestinationInput) (*Destination, error) {
	if in.Type == nil {
		return nil, gatehouse.Invalid("type is required")
	}
	if *in.Type != "email" {
		return nil, gatehouse.Invalid("type must be email")
	}
	if in.Config == nil || len(in.Config.To) == 0 {
		return nil, gatehouse.Invalid("config.to must list at least one email address")
	}
	if len(in.Config.To) > MaxRecipients {
		return nil, gatehouse.Invalid("config.to lists more than %d addresses", MaxRecipients)
	}
	d := &Destination{ID: gatehouse.NewID(), FormID: formID, Type: "email", Created: s.clock.Now(), Confirmed: []string{}}
	for _, raw := range in.Config.To {
		e, err := gatehouse.NormalizeEmail(raw)
		if err != nil {
			return nil, gatehouse.Invalid("config.to: %q is not a valid email address", raw)
		}
		d.To = append(d.To, e)
	}
	return d, nil
}

// AddDestination adds an email destination to a form. An address that is
// the verified address of a member of the workspace is confirmed at once;
// every other address gets one confirmation link by mail and receives
// submissions only once its recipient has followed it.
func (s *Service) AddDestination(ctx context.Context, p *gatehouse.Principal, id string, in *DestinationInput) (*Destination, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	d, err := s.newDestination(f.ID, in)
	if err != nil {
		return nil, err
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		addrs, unconfirmed, err := s.recipients(ctx, tx, f, d)
		if err != nil {
			return err
		}
		if err := tx.AddDestination(ctx, d); err != nil {
			return gatehouse.Internal("add destination", err)
		}
		if err := s.addRecipients(ctx, tx, f, d, addrs, unconfirmed); err != nil {
			return err
		}
		return s.audit(ctx, tx, p, f, "destination.created", "destination", d.ID,
			map[string]any{"type": d.Type, "to": d.To, "unconfirmed": d.Unconfirmed()})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// recipients lists d's addresses once each, in order, and those of them
// that are not a member's verified address and so need a confirmation
// mail, once the workspace has room for those mails today (which locks the
// workspace: before the destination's row is written, the order a
// workspace's deletion takes).
func (s *Service) recipients(ctx context.Context, tx Store, f *Form, d *Destination) (addrs, unconfirmed []string, err error) {
	verified, err := tx.VerifiedMemberEmails(ctx, f.OrgID, d.To)
	if err != nil {
		return nil, nil, gatehouse.Internal("find member addresses", err)
	}
	for _, to := range d.To {
		if !slices.Contains(addrs, to) {
			addrs = append(addrs, to)
			if !slices.Contains(verified, to) {
				unconfirmed = append(unconfirmed, to)
			}
		}
	}
	return addrs, unconfirmed, s.confirmMailRoom(ctx, tx, f.OrgID, len(unconfirmed), s.clock.Now())
}

// addRecipients stores a recipient per address, confirmed unless it is in
// unconfirmed, and queues the confirmation mails of the others in tx.
func (s *Service) addRecipients(ctx context.Context, tx Store, f *Form, d *Destination, addrs, unconfirmed []string) error {
	now := s.clock.Now()
	for _, to := range addrs {
		r := &Recipient{DestinationID: d.ID, FormID: f.ID, OrgID: f.OrgID, Email: to, ExpiresAt: now}
		if !slices.Contains(unconfirmed, to) {
			r.ConfirmedAt = &now
			d.Confirmed = append(d.Confirmed, to)
		} else {
			secret := token.NewSecret("")
			r.TokenHash, r.ExpiresAt, r.MailedAt = token.Hash(secret), now.Add(ConfirmTTL), &now
			lang, err := mailLanguage(ctx, tx, to, f.CreatedBy)
			if err != nil {
				return err
			}
			if err := tx.QueueMail(ctx, s.confirmMail(lang, f, to, secret)); err != nil {
				return gatehouse.Internal("queue confirmation mail", err)
			}
		}
		if err := tx.AddRecipient(ctx, r); err != nil {
			return gatehouse.Internal("add recipient", err)
		}
	}
	return nil
}

// ConfirmMailsPerDay bounds the destination confirmation links a workspace
// mails in a rolling day, unless Config.NoMailLimits: each one goes to an
// address nobody in the workspace has shown to be theirs.
const ConfirmMailsPerDay = 50

// confirmMailRoom answers 429, with the wait until enough of the day has
// passed, when n more confirmation mails would pass ConfirmMailsPerDay,
// and otherwise records them in tx. It locks the workspace first, so
// concurrent creates count each other's; the record outlives the
// destination, so deleting one frees no room.
func (s *Service) confirmMailRoom(ctx context.Context, tx Store, orgID string, n int, now time.Time) error {
	if n == 0 {
		return nil
	}
	if !s.noMailLimits {
		if err := tx.LockOrg(ctx, orgID); err != nil {
			return gatehouse.Internal("lock workspace", err)
		}
		if err := maillimit.Check(ctx, tx, now, 24*time.Hour, n, maillimit.Limit{Filter: maillimit.Filter{Kind: maillimit.FormConfirmation, OrgID: orgID},
			Max: ConfirmMailsPerDay, Message: "a workspace may mail at most %d destination confirmation links a day"}); err != nil {
			return err
		}
	}
	if err := tx.RecordMail(ctx, maillimit.FormConfirmation, orgID, "", now, n); err != nil {
		return gatehouse.Internal("record confirmation mails", err)
	}
	return nil
}

// confirmMail is the one message asking to to confirm a destination, in
// lang.
func (s *Service) confirmMail(lang language.Tag, f *Form, to, secret string) mail.Message {
	return mail.Message{To: to, Subject: i18n.T(lang, "Confirm that you want form submissions by email"),
		Text: i18n.Tf(lang, "Someone asked %s to email the submissions of the form %q to %s.\n\n"+
			"To receive them, open this link within %d days and press the button:\n\n%s?token=%s\n\n"+
			"If you did not expect this, ignore this message: nothing will be sent to you.\n",
			s.brand.Product(), f.Name, to, int(ConfirmTTL/(24*time.Hour)), s.confirm, secret)}
}

// mailLanguage is the language of the tool's mail to email about a form
// of the account owner: the recipient's preference when the address is a
// Gatehouse account's, else the form owner's, else the request's
// (Accept-Language), else English.
func mailLanguage(ctx context.Context, tx Store, email, owner string) (language.Tag, error) {
	code, err := tx.MailLanguage(ctx, gatehouse.EmailKey(email), owner)
	if err != nil {
		return i18n.English, gatehouse.Internal("read mail language", err)
	}
	return i18n.For(ctx, code), nil
}

var errBadConfirmation = gatehouse.Errorf(gatehouse.KindNotFound, "this confirmation link is not valid: it may be used or expired")

// ConfirmRecipient confirms the destination address of a confirmation
// link (single use, ConfirmTTL), so it receives the form's submissions.
func (s *Service) ConfirmRecipient(ctx context.Context, secret string) (*Recipient, *Form, error) {
	if secret == "" {
		return nil, nil, errBadConfirmation
	}
	var r *Recipient
	var f *Form
	err := s.store.Tx(ctx, func(tx Store) error {
		var err error
		r, err = tx.ConfirmRecipient(ctx, token.Hash(secret), s.clock.Now())
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errBadConfirmation
		}
		if err != nil {
			return gatehouse.Internal("confirm recipient", err)
		}
		f, err = tx.LiveForm(ctx, "", r.FormID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errBadConfirmation
		}
		if err != nil {
			return gatehouse.Internal("find form", err)
		}
		return s.audit(ctx, tx, nil, f, "destination.confirmed", "destination", r.DestinationID, map[string]any{"email": r.Email})
	})
	if err != nil {
		return nil, nil, err
	}
	return r, f, nil
}

// DeleteDestination removes a destination of a form.
func (s *Service) DeleteDestination(ctx context.Context, p *gatehouse.Principal, id, destID string) error {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return err
	}
	if !gatehouse.IsID(destID) {
		return gatehouse.Errorf(gatehouse.KindNotFound, "destination not found")
	}
	return s.store.Tx(ctx, func(tx Store) error {
		err := tx.DeleteDestination(ctx, f.ID, destID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "destination not found")
		}
		if err != nil {
			return gatehouse.Internal("delete destination", err)
		}
		return s.audit(ctx, tx, p, f, "destination.deleted", "destination", destID, map[string]any{})
	})
}
