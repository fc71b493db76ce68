package workspace

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/maillimit"
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
	perAccount, accountMsg := InviteMailsPerAccount, "an account may send at most %d invitation emails a day"
	if !inviter.EmailVerified {
		perAccount, accountMsg = InviteMailsPerUnverified, "until its email address is verified, an account may send at most %d invitation emails a day"
	}
	return maillimit.Check(ctx, invitationMails{tx}, s.Now(), InviteMailWindow, n,
		maillimit.Limit{Filter: maillimit.Filter{SenderID: inviter.ID}, Max: perAccount, Message: accountMsg},
		maillimit.Limit{Filter: maillimit.Filter{OrgID: orgID}, Max: InviteMailsPerOrg, Message: "an organization may send at most %d invitation emails a day"})
}

// invitationMails counts invitation mails for maillimit: the email
// invitations' own rows are their record.
type invitationMails struct{ tx Tables }

func (c invitationMails) CountMail(ctx context.Context, f maillimit.Filter) (int, error) {
	return c.tx.CountInvitationMails(ctx, InvitationMailFilter{InviterID: f.SenderID, OrgID: f.OrgID, Since: f.Since})
}

func (c invitationMails) MailAt(ctx context.Context, f maillimit.Filter, offset int) (time.Time, error) {
	return c.tx.InvitationMailAt(ctx, InvitationMailFilter{InviterID: f.SenderID, OrgID: f.OrgID, Since: f.Since}, offset)
}
