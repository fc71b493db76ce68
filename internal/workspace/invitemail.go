package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Invitation mail limits (issue 10 item 4, docs/decisions.md): how many
// email invitations one account, and one org, may send in a rolling day.
// They protect other people's mailboxes rather than this server, so they
// are counted in the database (every instance shares them) and stay on
// whatever GATEHOUSE_RATE_LIMIT says; Config.NoMailLimits turns them off.
const (
	InviteMailWindow         = 24 * time.Hour
	InviteMailsPerAccount    = 200 // a sender whose address is verified
	InviteMailsPerUnverified = 10  // a sender whose address is not verified
	InviteMailsPerOrg        = 500 // every sender of the org together
)

// InvitationMailFilter selects the email invitations created after Since
// by one account (InviterID set) or else in one org (OrgID).
type InvitationMailFilter struct {
	InviterID, OrgID string
	Since            time.Time
}

// inviteMailRoom answers 429, with the wait until enough of the window has
// passed, when n more invitation mails from inviter in org would pass a
// daily limit. It first locks the org, then the inviter (the order member
// removal takes), so concurrent invitations count each other's.
func (s *Service) inviteMailRoom(ctx context.Context, tx Tables, inviter *gatehouse.User, orgID string, n int) error {
	if s.noMailLimits {
		return nil
	}
	if err := tx.LockOrg(ctx, orgID); err != nil {
		return gatehouse.Internal("lock org", err)
	}
	if err := tx.LockUser(ctx, inviter.ID); err != nil {
		return gatehouse.Internal("lock inviter", err)
	}
	now := s.Now()
	since := now.Add(-InviteMailWindow)
	perAccount, accountMsg := InviteMailsPerAccount, "an account may send at most %d invitation emails a day"
	if !inviter.EmailVerified {
		perAccount, accountMsg = InviteMailsPerUnverified, "until its email address is verified, an account may send at most %d invitation emails a day"
	}
	var refusal *gatehouse.Error
	for _, l := range []struct {
		f     InvitationMailFilter
		limit int
		msg   string
	}{
		{InvitationMailFilter{InviterID: inviter.ID, Since: since}, perAccount, accountMsg},
		{InvitationMailFilter{OrgID: orgID, Since: since}, InviteMailsPerOrg, "an organization may send at most %d invitation emails a day"},
	} {
		wait, err := s.mailWait(ctx, tx, l.f, l.limit, n, now)
		if err != nil {
			return err
		}
		if wait > 0 && (refusal == nil || wait > refusal.RetryAfter) {
			refusal = &gatehouse.Error{Kind: gatehouse.KindTooMany, Message: fmt.Sprintf(l.msg, l.limit) + "; try again later", RetryAfter: wait}
		}
	}
	if refusal != nil {
		return refusal
	}
	return nil
}

// mailWait is how long until n more invitation mails of f's scope fit
// under limit: zero when they fit now, a whole window when n alone is more.
func (s *Service) mailWait(ctx context.Context, tx Tables, f InvitationMailFilter, limit, n int, now time.Time) (time.Duration, error) {
	sent, err := tx.CountInvitationMails(ctx, f)
	if err != nil {
		return 0, gatehouse.Internal("count invitation mails", err)
	}
	over := sent + n - limit
	if over <= 0 {
		return 0, nil
	}
	// The over oldest mails of the window must leave it first.
	at, err := tx.InvitationMailAt(ctx, f, over-1)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return InviteMailWindow, nil
	}
	if err != nil {
		return 0, gatehouse.Internal("find invitation mail", err)
	}
	return max(at.Add(InviteMailWindow).Sub(now), time.Second), nil
}
