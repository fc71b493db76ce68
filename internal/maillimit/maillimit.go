// Package maillimit is the one mechanism behind the limits on mail to
// other people's addresses (invitations, Sign's signing requests and
// reminders, Forms' confirmation links and autoresponses): how many mails
// of a kind an account, or a workspace, sent over a rolling window,
// counted in the database so every instance shares the count, and how
// long a sender must wait for room. The caller locks what it counts (the
// workspace, then the account) in the transaction that queues the mail and
// records it, so concurrent sends count each other's.
package maillimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Kinds of mail the ledger (Ledger.RecordMail) records; invitations are
// counted from their own rows.
const (
	Sign             = "sign"              // Sign's signing requests and reminders
	FormConfirmation = "form_confirmation" // Forms' destination confirmation links
	FormAutoresponse = "form_autoresponse" // Forms' autoresponses
)

// Filter selects the mails of Kind sent after Since by one account
// (SenderID set) or else in one workspace (OrgID).
type Filter struct {
	Kind, SenderID, OrgID string
	Since                 time.Time
}

// Counter reads a record of sent mail.
type Counter interface {
	// CountMail is how many mails f selects.
	CountMail(ctx context.Context, f Filter) (int, error)
	// MailAt is when the mail at offset (0: the oldest) of those f selects
	// was sent; gatehouse.ErrNotFound when there are not that many.
	MailAt(ctx context.Context, f Filter, offset int) (time.Time, error)
}

// Ledger is the record of the kinds above: one row per mail, kept a
// little past the longest window.
type Ledger interface {
	Counter
	// RecordMail records n mails of kind sent at at by sender (empty: no
	// account, such as a form's autoresponse) in org.
	RecordMail(ctx context.Context, kind, orgID, senderID string, at time.Time, n int) error
}

// Limit is at most Max mails of Filter's scope (its Since is set by
// Check) per window; Message is the refusal, with %d for Max.
type Limit struct {
	Filter  Filter
	Max     int
	Message string
}

// Check answers 429 (gatehouse.KindTooMany), with Retry-After the longest
// wait until enough of the window has passed, when n more mails sent at
// now would pass one of limits; nil when they all fit.
func Check(ctx context.Context, c Counter, now time.Time, window time.Duration, n int, limits ...Limit) error {
	var refusal *gatehouse.Error
	for _, l := range limits {
		l.Filter.Since = now.Add(-window)
		wait, err := Wait(ctx, c, l.Filter, l.Max, n, now, window)
		if err != nil {
			return err
		}
		if wait > 0 && (refusal == nil || wait > refusal.RetryAfter) {
			refusal = &gatehouse.Error{Kind: gatehouse.KindTooMany, Message: fmt.Sprintf(l.Message, l.Max) + "; try again later", RetryAfter: wait}
		}
	}
	if refusal != nil {
		return refusal
	}
	return nil
}

// Wait is how long until n more mails of f (whose Since is now − window)
// fit under max: zero when they fit now, a whole window when n alone is
// more.
func Wait(ctx context.Context, c Counter, f Filter, max, n int, now time.Time, window time.Duration) (time.Duration, error) {
	sent, err := c.CountMail(ctx, f)
	if err != nil {
		return 0, gatehouse.Internal("count mail", err)
	}
	over := sent + n - max
	if over <= 0 {
		return 0, nil
	}
	// The over oldest mails of the window must leave it first.
	at, err := c.MailAt(ctx, f, over-1)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return window, nil
	}
	if err != nil {
		return 0, gatehouse.Internal("find mail", err)
	}
	return max1s(at.Add(window).Sub(now)), nil
}

func max1s(d time.Duration) time.Duration { return max(d, time.Second) }
