package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
)

// Security notices (issue 30 item 6, mail): a change to how an account
// signs in, or a key made to act as it, is mailed to the account's address
// in the transaction that makes it, with what to do if it was not them.
// What each says is fixed text; nothing the request chose but a key's or a
// passkey's name, which its owner gave.
const (
	NoticePassword      = "Your password was changed."
	NoticePasswordReset = "Your password was reset with a link sent to this address."
	NoticeFactorAdded   = "An authenticator app was added to your account: signing in now asks for its code."
	NoticeFactorRemoved = "An authenticator app was removed from your account: signing in no longer asks for its code."
	NoticeNewCodes      = "New recovery codes were made for your account; the earlier ones no longer work."
	NoticePasskeyAdded  = "A passkey was added to your account."
	NoticePasskeyGone   = "A passkey was removed from your account."
)

// ActivityPath is the console page of an account's security activity,
// which each notice points to.
const ActivityPath = "/account/activity"

// recoveryCodeNotice is the notice of a recovery code used, with left.
func recoveryCodeNotice(left int) string {
	switch left {
	case 0:
		return "A recovery code of your account was used. You have none left: make new ones on the two-factor page."
	case 1:
		return "A recovery code of your account was used. You have 1 left."
	}
	return fmt.Sprintf("A recovery code of your account was used. You have %d left.", left)
}

// notify queues the notice what to userID's address (none for an account
// deleted meanwhile).
func (s *Service) notify(ctx context.Context, tx Store, userID, what string) error {
	u, err := tx.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("find user", err)
	}
	if err := tx.QueueMail(ctx, s.noticeMail(u.Email, what)); err != nil {
		return internal("queue security notice", err)
	}
	return nil
}

// noticeMail is the message of a security notice.
func (s *Service) noticeMail(to, what string) mail.Message {
	return mail.Message{To: to, Subject: "Security notice from " + s.brand.Product(),
		Text: what + "\n\nIf it was you, there is nothing to do. Your account's recent sign-ins and changes are listed at " +
			s.webURL + ActivityPath + ".\n\n" +
			"If it was not you, someone else can sign in to your account: reset your password at " + s.webURL + "/recover " +
			"(the link goes to this address), then sign out every other session at " + s.webURL + "/account/sessions " +
			"and check your two-factor settings, passkeys and API keys.\n"}
}
