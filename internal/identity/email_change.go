package identity

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"

	"golang.org/x/text/language"
)

// The change of an account's email address (issue 30 item 1). The person
// asks with a recent sign-in; a link goes to the new address; until it is
// opened the old address stays. Opening it moves the account to the new
// address (then verified: the link proves the mailbox, so the domain
// auto-join a proof of the mailbox runs follows) and mails the old address
// a notice with a link that undoes the change. Sessions stay. Undoing puts
// the old address back and disarms the account, as a claim of the mailbox
// does: whoever changed the address held a session and a recent sign-in,
// so every credential may be theirs; the owner signs in with an emailed
// link and sets a new password.
const (
	ChangeEmailTTL = 24 * time.Hour
	// UndoEmailTTL is how long the old address can undo a change: a week,
	// as the old mailbox may pass to someone else (a job left) and undoing
	// hands the account back to it.
	UndoEmailTTL = 7 * 24 * time.Hour
	// ChangeEmailThrottle is the least time between two change links.
	ChangeEmailThrottle = time.Minute
)

// Paths of the pages the change mails link to (served by internal/pages).
const (
	ChangeEmailPath = "/account/email/confirm"
	UndoEmailPath   = "/account/email/undo"
)

var (
	errEmailTaken = gatehouse.Errorf(gatehouse.KindConflict, "another account uses this email address").WithField("email")
	errBadLink    = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")
)

// RequestEmailChange mails a confirmation link to newEmail, which must be
// free (no account has its normalised key). A new request replaces the
// link of an earlier one. It returns the address as it will be shown.
func (s *Service) RequestEmailChange(ctx context.Context, p *gatehouse.Principal, newEmail string) (string, error) {
	key, email, err := gatehouse.ParseEmail(newEmail)
	if err != nil {
		return "", err
	}
	var out string
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := s.recentSession(ctx, tx, p, "change your email address"); err != nil {
			return err
		}
		// Lock the account so concurrent requests see each other's links.
		if err := tx.LockUser(ctx, p.UserID); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("lock user", err)
		}
		u, err := workspace.Caller(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		if key == u.EmailKey {
			return gatehouse.InvalidField("email", "this is already your email address")
		}
		switch _, err := tx.UserByEmail(ctx, key); {
		case err == nil:
			return errEmailTaken
		case !errors.Is(err, gatehouse.ErrNotFound):
			return internal("find user", err)
		}
		now := s.Now()
		last, err := tx.LatestEmailToken(ctx, u.ID, PurposeChangeEmail)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("latest token", err)
		}
		if last != nil && now.Sub(last.CreatedAt) < ChangeEmailThrottle {
			return gatehouse.TooMany(last.CreatedAt.Add(ChangeEmailThrottle).Sub(now))
		}
		if err := tx.SpendEmailTokens(ctx, u.ID, PurposeChangeEmail, now); err != nil {
			return internal("spend earlier links", err)
		}
		secret := token.NewSecret("")
		if err := tx.CreateEmailToken(ctx, &EmailToken{Hash: token.Hash(secret), Purpose: PurposeChangeEmail, Email: email,
			UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(ChangeEmailTTL)}); err != nil {
			return internal("create change token", err)
		}
		if err := tx.QueueMail(ctx, s.changeEmailMail(i18n.For(ctx, u.Language), u.Email, email, secret)); err != nil {
			return internal("queue change mail", err)
		}
		out = email
		return s.auditPersonal(ctx, tx, u.ID, "", "user.email_change_requested", map[string]any{"to": email})
	})
	return out, err
}

// EmailChanged is the outcome of a confirmed change.
type EmailChanged struct {
	User *gatehouse.User
	// From is the address the account had.
	From string
}

// ConfirmEmailChange uses a change link: the account moves to its address
// unless another account holds that address now (someone claimed it since
// the request), and the old address gets a notice with the undo link.
func (s *Service) ConfirmEmailChange(ctx context.Context, secret string) (*EmailChanged, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	var out *EmailChanged
	err := s.store.Tx(ctx, func(tx Store) error {
		now := s.Now()
		u, from, email, key, err := moveAddress(ctx, tx, secret, PurposeChangeEmail, tx.UserByID, now)
		if err != nil {
			return err
		}
		// Links mailed to the old address stop working with it.
		if err := tx.SpendEmailTokens(ctx, u.ID, PurposeVerifyEmail, now); err != nil {
			return internal("spend confirmation links", err)
		}
		undo := token.NewSecret("")
		if err := tx.CreateEmailToken(ctx, &EmailToken{Hash: token.Hash(undo), Purpose: PurposeUndoEmail, Email: from,
			UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(UndoEmailTTL)}); err != nil {
			return internal("create undo token", err)
		}
		if err := tx.QueueMail(ctx, s.emailChangedMail(i18n.For(ctx, u.Language), from, email, undo)); err != nil {
			return internal("queue notice", err)
		}
		if err := s.auditPersonal(ctx, tx, u.ID, "", "user.email_changed", map[string]any{"from": from, "to": email}); err != nil {
			return err
		}
		u.Email, u.EmailKey, u.EmailVerified, u.UpdatedAt = email, key, true, now
		// The new address is proven: domain auto-join applies to it.
		if err := s.ws.AutoJoin(ctx, tx, u); err != nil {
			return err
		}
		out = &EmailChanged{User: u, From: from}
		return nil
	})
	if out != nil {
		s.users.Drop(out.User.ID)
	}
	return out, err
}

// UndoEmailChange uses the link of a change notice: the old address comes
// back (unless another account holds it now) and the account is disarmed
// (every session, password, factor, passkey, grant and key removed), since
// whoever changed the address could sign in to it.
func (s *Service) UndoEmailChange(ctx context.Context, secret string) (*gatehouse.User, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	var out *gatehouse.User
	err := s.store.Tx(ctx, func(tx Store) error {
		now := s.Now()
		u, from, email, key, err := moveAddress(ctx, tx, secret, PurposeUndoEmail, tx.PinUser, now)
		if err != nil {
			return err
		}
		meta := map[string]any{"from": from, "to": email}
		if err := disarm(ctx, tx, u, now, meta); err != nil {
			return err
		}
		for _, purpose := range []string{PurposeChangeEmail, PurposeVerifyEmail, PurposeUndoEmail} {
			if err := tx.SpendEmailTokens(ctx, u.ID, purpose, now); err != nil {
				return internal("spend links", err)
			}
		}
		if err := s.auditPersonal(ctx, tx, u.ID, "", "user.email_change_undone", meta); err != nil {
			return err
		}
		// The address that was taken away learns why it no longer signs in.
		if err := tx.QueueMail(ctx, s.emailUndoneMail(i18n.For(ctx, u.Language), from, email)); err != nil {
			return internal("queue notice", err)
		}
		u.Email, u.EmailKey, u.EmailVerified, u.UpdatedAt = email, key, true, now
		u.PasswordHash, u.DefaultOrgID = "", ""
		out = u
		return nil
	})
	if out != nil {
		s.users.Drop(out.ID)
		s.log.Info("email change undone from the old address; account disarmed", "user_id", out.ID)
	}
	return out, err
}

// changeEmailMail carries the link that confirms a new address.
func (s *Service) changeEmailMail(lang language.Tag, from, to, secret string) mail.Message {
	link := s.webURL + ChangeEmailPath + "?token=" + url.QueryEscape(secret)
	return mail.Message{To: to, Subject: i18n.T(lang, "Confirm your new email address"),
		Text: i18n.Tf(lang, "Someone asked to move the %s account of %s to this address. If it was you, confirm by opening this link:\n\n%s\n\n"+
			"The link works once and expires in 24 hours. Until then the account keeps its current address.\n\nIf it was not you, ignore this message.\n",
			s.brand.Product(), from, link)}
}

// emailChangedMail is the notice to the old address, with the undo link.
func (s *Service) emailChangedMail(lang language.Tag, from, to, secret string) mail.Message {
	link := s.webURL + UndoEmailPath + "?token=" + url.QueryEscape(secret)
	return mail.Message{To: from, Subject: i18n.T(lang, "Your email address was changed"),
		Text: i18n.Tf(lang, "The %[1]s account of %[2]s now uses the address %[3]s. If you made this change, there is nothing to do.\n\n"+
			"If it was not you, open this link to report it:\n\n%[4]s\n\n"+
			"It puts %[2]s back, signs everyone out and removes the account's password, two-factor settings, passkeys and API keys; then sign in with an emailed sign-in link and choose a new password. The link works once, for 7 days.\n",
			s.brand.Product(), from, to, link)}
}

// emailUndoneMail tells the address a change had moved to that the change
// was undone from the old one.
func (s *Service) emailUndoneMail(lang language.Tag, to, back string) mail.Message {
	return mail.Message{To: to, Subject: i18n.T(lang, "Your email address change was undone"),
		Text: i18n.Tf(lang, "The change of a %[1]s account to this address was reported as not made by its owner, from %[2]s. "+
			"The account uses %[2]s again and everyone was signed out of it. If you made the change, sign in with an emailed sign-in link sent to %[2]s.\n",
			s.brand.Product(), back)}
}

// moveAddress uses an email-change or undo link (purpose) and moves its
// account to the link's address, verified: the user (locked, read by
// read), the address it had, the new one and its key. A used, expired or
// unknown link, or an account gone, is errBadLink; an address another
// account holds now is errEmailTaken.
func moveAddress(ctx context.Context, tx Store, secret, purpose string, read func(context.Context, string) (*gatehouse.User, error),
	now time.Time) (u *gatehouse.User, from, email, key string, err error) {
	t, err := tx.UseEmailToken(ctx, token.Hash(secret), purpose, now)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && t.UserID == "") {
		return nil, "", "", "", errBadLink
	}
	if err != nil {
		return nil, "", "", "", internal("use "+purpose+" token", err)
	}
	if err := tx.LockUser(ctx, t.UserID); errors.Is(err, gatehouse.ErrNotFound) {
		return nil, "", "", "", errBadLink
	} else if err != nil {
		return nil, "", "", "", internal("lock user", err)
	}
	if u, err = read(ctx, t.UserID); errors.Is(err, gatehouse.ErrNotFound) {
		return nil, "", "", "", errBadLink
	} else if err != nil {
		return nil, "", "", "", internal("find user", err)
	}
	if key, email, err = gatehouse.ParseEmail(t.Email); err != nil {
		return nil, "", "", "", errBadLink
	}
	if err := tx.SetUserEmail(ctx, u.ID, email, key, true, now); errors.Is(err, gatehouse.ErrNotFound) {
		return nil, "", "", "", errEmailTaken
	} else if err != nil {
		return nil, "", "", "", internal("set email", err)
	}
	return u, u.Email, email, key, nil
}
