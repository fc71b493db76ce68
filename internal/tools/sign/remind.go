package sign

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
)

// MaxRemindDays bounds autoRemindDays (a year).
const MaxRemindDays = 365

// reminderStore is what the signing requests and reminders need of the
// store.
type reminderStore interface {
	// QueueMail queues m in the transaction: it is sent once that
	// commits, never if it rolls back.
	QueueMail(ctx context.Context, m mail.Message) error
	// DueReminders lists the ids and orgs of pending documents with
	// reminders whose last reminder (or, before the first, their sending)
	// is autoRemindDays or more before now (at most limit).
	DueReminders(ctx context.Context, now time.Time, limit int) ([][2]string, error)
	// ClaimReminder sets a due document's lastRemindedAt to now; false
	// when it is not due (another run, or a signature, got there first).
	ClaimReminder(ctx context.Context, id string, now time.Time) (bool, error)
}

// remindDays checks a create's autoRemindDays: absent or 0 (never), or 1
// to MaxRemindDays.
func remindDays(n *int) (int, error) {
	if n == nil {
		return 0, nil
	}
	if *n < 0 || *n > MaxRemindDays {
		return 0, gatehouse.Invalid("document.autoRemindDays must be from 0 (never) to %d", MaxRemindDays)
	}
	return *n, nil
}

// requestSignatures queues, in tx, a signing request to each signer of d
// (signing is parallel: all at once). cc recipients get no mail.
func (s *Service) requestSignatures(ctx context.Context, tx Store, d *Document) error {
	for _, r := range d.Recipients {
		if r.Role != Signer {
			continue
		}
		m := mail.Message{To: r.Email, Subject: "Please sign: " + oneLine(d.Name), Text: s.signingText(d, r, false)}
		if err := tx.QueueMail(ctx, m); err != nil {
			return gatehouse.Internal("queue signing request", err)
		}
	}
	return nil
}

// RemindDue sends a reminder round for each pending document whose
// autoRemindDays have passed since its last round (or since it was
// sent): one mail to each signer who has neither signed nor declined. The
// round is claimed by a conditional UPDATE of lastRemindedAt, so when
// sweeps run at once on several instances each round goes out once. It
// returns how many documents this call reminded.
func (s *Service) RemindDue(ctx context.Context) (int, error) {
	return s.sweep(ctx, "find due reminders", s.store.DueReminders, s.remind)
}

// sweep lists the documents due at now (id and org, sweepBatch at a time)
// and applies one to each, in its own transaction, until fewer than a
// batch are due; it returns how many one changed.
func (s *Service) sweep(ctx context.Context, what string, list func(context.Context, time.Time, int) ([][2]string, error),
	one func(ctx context.Context, id, org string, now time.Time) (bool, error)) (int, error) {
	n := 0
	for {
		now := s.clock.Now()
		due, err := list(ctx, now, sweepBatch)
		if err != nil {
			return n, gatehouse.Internal(what, err)
		}
		for _, d := range due {
			ok, err := one(ctx, d[0], d[1], now)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if len(due) < sweepBatch {
			return n, nil
		}
	}
}

// remind sends one document's reminder round if it is still due.
func (s *Service) remind(ctx context.Context, id, org string, now time.Time) (bool, error) {
	done := false
	err := s.store.Tx(ctx, func(tx Store) error {
		ok, err := tx.ClaimReminder(ctx, id, now)
		if err != nil || !ok {
			return err
		}
		d, err := tx.Document(ctx, org, id, false, false)
		if err != nil {
			return err
		}
		sent := 0
		for _, r := range d.Recipients {
			if r.Role != Signer || r.Status == Signed || r.Status == Refused {
				continue
			}
			m := mail.Message{To: r.Email, Subject: "Reminder: please sign " + oneLine(d.Name), Text: s.signingText(d, r, true)}
			if err := tx.QueueMail(ctx, m); err != nil {
				return err
			}
			sent++
		}
		done = true
		return s.audit(ctx, tx, "", d, "document.reminded", map[string]any{"recipients": sent})
	})
	if err != nil {
		return false, gatehouse.Internal("remind signers", err)
	}
	return done, nil
}

// signingText is the body of a signing request or reminder to r.
func (s *Service) signingText(d *Document, r *Recipient, reminder bool) string {
	var b strings.Builder
	if reminder {
		fmt.Fprintf(&b, "Hello %s,\n\nThis is a reminder: the document %q is still waiting for your signature.\n", r.Name, d.Name)
	} else {
		fmt.Fprintf(&b, "Hello %s,\n\nYou are asked to sign the document %q.\n", r.Name, d.Name)
	}
	if msg := strings.TrimSpace(d.Message); msg != "" {
		fmt.Fprintf(&b, "\nMessage from the sender:\n\n%s\n", msg)
	}
	fmt.Fprintf(&b, "\nOpen this link to read and sign it:\n\n%s\n", s.SigningURL(r))
	if d.ExpiresAt != nil {
		fmt.Fprintf(&b, "\nThe link works until %s.\n", d.ExpiresAt.Format(time.RFC1123))
	}
	b.WriteString("\nThe link is yours alone: do not forward this message. If you did not expect it, ignore it.\n")
	return b.String()
}

// oneLine makes a document name fit a subject: its words, one space apart.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
