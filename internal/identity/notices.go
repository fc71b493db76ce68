package identity

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"

	"golang.org/x/text/language"
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

// recoveryCodeNotice is the notice of a recovery code used, with left:
// a catalogue key and its arguments.
func recoveryCodeNotice(left int) (string, []any) {
	switch left {
	case 0:
		return "A recovery code of your account was used. You have none left: make new ones on the two-factor page.", nil
	case 1:
		return "A recovery code of your account was used. You have 1 left.", nil
	}
	return "A recovery code of your account was used. You have %d left.", []any{left}
}

// notify queues the notice what (a catalogue key) to userID's address,
// in the person's language (none for an account deleted meanwhile).
func (s *Service) notify(ctx context.Context, tx Store, userID, what string) error {
	return s.notifyIn(ctx, tx, userID, func(lang language.Tag) string { return i18n.T(lang, what) })
}

// notifyf is notify of a notice that names something: format (a
// catalogue key) formatted with args.
func (s *Service) notifyf(ctx context.Context, tx Store, userID, format string, args ...any) error {
	return s.notifyIn(ctx, tx, userID, func(lang language.Tag) string { return i18n.Tf(lang, format, args...) })
}

// notifyIn queues the notice text, in the language of userID, to them.
func (s *Service) notifyIn(ctx context.Context, tx Store, userID string, text func(language.Tag) string) error {
	u, err := tx.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("find user", err)
	}
	lang := i18n.For(ctx, u.Language)
	if err := tx.QueueMail(ctx, s.noticeMail(lang, u.Email, text(lang))); err != nil {
		return internal("queue security notice", err)
	}
	return nil
}

// noticeMail is the message of a security notice in lang; what is the
// notice already in lang.
func (s *Service) noticeMail(lang language.Tag, to, what string) mail.Message {
	return mail.Message{To: to, Subject: i18n.Tf(lang, "Security notice from %s", s.brand.Product()),
		Text: what + "\n\n" + i18n.Tf(lang, "If it was you, there is nothing to do. Your account's recent sign-ins and changes are listed at %[1]s.\n\n"+
			"If it was not you, someone else can sign in to your account: reset your password at %[2]s "+
			"(the link goes to this address), then sign out every other session at %[3]s "+
			"and check your two-factor settings, passkeys and API keys.\n",
			s.webURL+ActivityPath, s.webURL+"/recover", s.webURL+"/account/sessions")}
}
