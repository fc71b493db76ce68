package sign

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/maillimit"

	"golang.org/x/text/language"
)

// MaxRemindDays bounds autoRemindDays (a year).
const MaxRemindDays = 365

// reminderStore is what the signing requests and reminders need of the
// store.
type reminderStore interface {
	// QueueMail queues m in the transaction: it is sent once that
	// commits, never if it rolls back.
	QueueMail(ctx context.Context, m mail.Message) error
	// MailLanguage is the language preference of the account with the
	// address key emailKey, else of the account senderID, else "".
	MailLanguage(ctx context.Context, emailKey, senderID string) (string, error)
	// DueReminders lists the ids and orgs of pending documents with
	// reminders whose last reminder (or, before the first, their sending)
	// is autoRemindDays or more before now (at most limit).
	DueReminders(ctx context.Context, now time.Time, limit int) ([][2]string, error)
	// ClaimReminder sets a due document's lastRemindedAt to now and
	// counts the round; false when it is not due (another run, or a
	// signature, got there first). A document is due for at most
	// MaxReminderRounds rounds, and not before the time PostponeReminder
	// set.
	ClaimReminder(ctx context.Context, id string, now time.Time) (bool, error)
	// PostponeReminder makes a document due at now wait until until;
	// false when it is not due.
	PostponeReminder(ctx context.Context, id string, now, until time.Time) (bool, error)
	// LockOrg takes the workspace's row lock until the transaction ends.
	LockOrg(ctx context.Context, orgID string) error
	// LockSender takes the account's row lock until the transaction ends
	// and tells whether its address is verified; ErrNotFound when the
	// account is gone.
	LockSender(ctx context.Context, userID string) (verified bool, err error)
	// The record of sent mail the limits count (maillimit.Sign rows).
	maillimit.Ledger
}

// Mail limits on Sign's signing requests and reminders (issue 24 item 1,
// docs/decisions.md): mail to addresses the sender chose, with the
// sender's own text, so they are counted per sending account and per
// workspace over a rolling day, in the database, like invitations, and
// far lower until the sender's address is verified. A reminder counts
// against its document owner's and its workspace's limits.
const (
	MailWindow         = 24 * time.Hour
	MailsPerAccount    = 200 // a sender whose address is verified
	MailsPerUnverified = 10  // a sender whose address is not verified
	MailsPerOrg        = 500 // every sender of the workspace, reminders included
	// MaxReminderRounds is how many automatic reminder rounds a document
	// gets at most (fewer if it expires first).
	MaxReminderRounds = 5
)

// mailRoom answers 429, with the wait until enough of the day has passed,
// when n more Sign mails from sender (empty: no account, only the
// workspace's limit) in org would pass a limit, and otherwise records
// them in tx, the transaction that queues them. It locks the workspace,
// then the sender, so concurrent sends count each other's.
func (s *Service) mailRoom(ctx context.Context, tx Store, orgID, sender string, n int) error {
	if n == 0 {
		return nil
	}
	now := s.clock.Now()
	if !s.noMailLimits {
		if err := tx.LockOrg(ctx, orgID); err != nil {
			return gatehouse.Internal("lock workspace", err)
		}
		limits := []maillimit.Limit{{Filter: maillimit.Filter{Kind: maillimit.Sign, OrgID: orgID}, Max: MailsPerOrg,
			Message: "a workspace may send at most %d signing requests and reminders a day"}}
		if sender != "" {
			verified, err := tx.LockSender(ctx, sender)
			if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				return gatehouse.Internal("lock sender", err)
			}
			l := maillimit.Limit{Filter: maillimit.Filter{Kind: maillimit.Sign, SenderID: sender}, Max: MailsPerAccount,
				Message: "an account may send at most %d signing requests a day"}
			if !verified {
				l.Max, l.Message = MailsPerUnverified, "until its email address is verified, an account may send at most %d signing requests a day"
			}
			limits = append(limits, l)
		}
		if err := maillimit.Check(ctx, tx, now, MailWindow, n, limits...); err != nil {
			return err
		}
	}
	if err := tx.RecordMail(ctx, maillimit.Sign, orgID, sender, now, n); err != nil {
		return gatehouse.Internal("record signing mail", err)
	}
	return nil
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
// (signing is parallel: all at once), sent by sender, once the mail
// limits have room for them all. cc recipients get no mail.
func (s *Service) requestSignatures(ctx context.Context, tx Store, d *Document, sender string) error {
	var msgs []mail.Message
	for _, r := range d.Recipients {
		if r.Role == Signer {
			lang, err := mailLanguage(ctx, tx, r.Email, sender)
			if err != nil {
				return err
			}
			msgs = append(msgs, mail.Message{To: r.Email, Subject: i18n.Tf(lang, "Please sign: %s", oneLine(d.Name)), Text: s.signingText(lang, d, r, false)})
		}
	}
	if err := s.mailRoom(ctx, tx, d.OrgID, sender, len(msgs)); err != nil {
		return err
	}
	for _, m := range msgs {
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

// errNoRoom rolls back a reminder round the mail limits have no room for.
var errNoRoom = errors.New("no room for the reminder round")

// remind sends one document's reminder round if it is still due: one of
// its MaxReminderRounds, mail from its owner. A round the mail limits
// have no room for is postponed until they have, and written to the
// workspace's audit log; it is not a failure.
func (s *Service) remind(ctx context.Context, id, org string, now time.Time) (bool, error) {
	done := false
	var wait time.Duration
	var unsigned int
	err := s.store.Tx(ctx, func(tx Store) error {
		ok, err := tx.ClaimReminder(ctx, id, now)
		if err != nil || !ok {
			return err
		}
		d, err := tx.Document(ctx, org, id, false, false)
		if err != nil {
			return err
		}
		var msgs []mail.Message
		for _, r := range d.Recipients {
			if r.Role != Signer || r.Status == Signed || r.Status == Refused {
				continue
			}
			lang, err := mailLanguage(ctx, tx, r.Email, d.OwnerID)
			if err != nil {
				return err
			}
			msgs = append(msgs, mail.Message{To: r.Email, Subject: i18n.Tf(lang, "Reminder: please sign %s", oneLine(d.Name)), Text: s.signingText(lang, d, r, true)})
		}
		if err := s.mailRoom(ctx, tx, d.OrgID, d.OwnerID, len(msgs)); err != nil {
			var e *gatehouse.Error
			if errors.As(err, &e) && e.Kind == gatehouse.KindTooMany {
				wait, unsigned = e.RetryAfter, len(msgs)
				return errNoRoom
			}
			return err
		}
		for _, m := range msgs {
			if err := tx.QueueMail(ctx, m); err != nil {
				return err
			}
		}
		done = true
		return s.audit(ctx, tx, "", d, "document.reminded", map[string]any{"recipients": len(msgs)})
	})
	if errors.Is(err, errNoRoom) {
		return false, s.postpone(ctx, id, org, now, wait, unsigned)
	}
	if err != nil {
		return false, gatehouse.Internal("remind signers", err)
	}
	return done, nil
}

// postpone makes a document's reminder round, refused by the mail limits,
// wait until they have room, and audits it.
func (s *Service) postpone(ctx context.Context, id, org string, now time.Time, wait time.Duration, unsigned int) error {
	err := s.store.Tx(ctx, func(tx Store) error {
		ok, err := tx.PostponeReminder(ctx, id, now, now.Add(wait))
		if err != nil || !ok {
			return err
		}
		d, err := tx.Document(ctx, org, id, false, false)
		if err != nil {
			return err
		}
		return s.audit(ctx, tx, "", d, "document.reminder_postponed",
			map[string]any{"recipients": unsigned, "retry_after_seconds": int(wait.Seconds()), "reason": "mail limit"})
	})
	if err != nil {
		return gatehouse.Internal("postpone reminder", err)
	}
	return nil
}

// signingText is the body of a signing request (or, reminder, of its
// reminder) to signer r of d, in lang.
func (s *Service) signingText(lang language.Tag, d *Document, r *Recipient, reminder bool) string {
	var b strings.Builder
	if reminder {
		b.WriteString(i18n.Tf(lang, "Hello %s,\n\nThis is a reminder: the document %q is still waiting for your signature.\n", r.Name, d.Name))
	} else {
		b.WriteString(i18n.Tf(lang, "Hello %s,\n\nYou are asked to sign the document %q.\n", r.Name, d.Name))
	}
	if msg := strings.TrimSpace(d.Message); msg != "" {
		b.WriteString(i18n.Tf(lang, "\nMessage from the sender:\n\n%s\n", msg))
	}
	b.WriteString(i18n.Tf(lang, "\nOpen this link to read and sign it:\n\n%s\n", s.SigningURL(r)))
	if d.ExpiresAt != nil {
		until := d.ExpiresAt.Format(time.RFC1123)
		if lang != i18n.English {
			until = i18n.DateTime(lang, *d.ExpiresAt)
		}
		b.WriteString(i18n.Tf(lang, "\nThe link works until %s.\n", until))
	}
	b.WriteString(i18n.T(lang, "\nThe link is yours alone: do not forward this message. If you did not expect it, ignore it.\n"))
	return b.String()
}

// mailLanguage is the language of a tool's mail to email sent by the
// account sender: the recipient's preference when the address is a
// Gatehouse account's, else the sender's, else the request's
// (Accept-Language), else English.
func mailLanguage(ctx context.Context, tx reminderStore, email, sender string) (language.Tag, error) {
	code, err := tx.MailLanguage(ctx, gatehouse.EmailKey(email), sender)
	if err != nil {
		return i18n.English, gatehouse.Internal("read mail language", err)
	}
	return i18n.For(ctx, code), nil
}

// oneLine makes a document name fit a subject: its words, one space apart.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
