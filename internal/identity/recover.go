package identity

import (
	"context"
	"errors"
	"net/url"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"
)

// errBadReset is the one answer to a reset link that is unknown, expired,
// used, or whose account is gone or has another address now.
var errBadReset = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")

// RequestRecovery mails the account at email a single-use link to set a
// new password (RecoveryTTL). A well-formed address answers nil whether or
// not it has an account, after the same work: the account is looked up and
// one token row is written either way (an unknown address's row names no
// account, is sent to no one and can never be used); a known address's
// mail is queued in the same transaction (one more row) and sent by the
// job engine. A malformed address is a 400.
func (s *Service) RequestRecovery(ctx context.Context, email string) error {
	key, email, err := gatehouse.ParseEmail(email)
	if err != nil {
		return err
	}
	u, err := s.store.UserByEmail(ctx, key)
	if errors.Is(err, gatehouse.ErrNotFound) {
		u = nil
	} else if err != nil {
		return internal("find user", err)
	}
	secret := token.NewSecret("")
	now := s.Now()
	t := &EmailToken{Hash: token.Hash(secret), Purpose: PurposePasswordReset, Email: email, CreatedAt: now, ExpiresAt: now.Add(RecoveryTTL)}
	if u != nil {
		t.UserID, t.Email = u.ID, u.Email
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if err := tx.CreateEmailToken(ctx, t); err != nil {
			return internal("create reset link", err)
		}
		if u == nil {
			return nil
		}
		if err := tx.QueueMail(ctx, s.resetMail(u.Email, secret)); err != nil {
			return internal("queue reset mail", err)
		}
		return nil
	})
}

// resetMail is the message that carries a password reset link.
func (s *Service) resetMail(email, secret string) mail.Message {
	link := s.webURL + "/reset-password?token=" + url.QueryEscape(secret)
	return mail.Message{To: email, Subject: "Set a new " + s.brand.Product() + " password",
		Text: "Someone asked to set a new password for the " + s.brand.Product() + " account of this address. If it was you, open this link to choose one:\n\n" + link +
			"\n\nThe link works once and expires in 1 hour. Setting a new password signs you out everywhere else.\n\nIf you did not ask for it, ignore this message: your password stays as it is.\n"}
}

// ResetPassword sets a new password with an emailed reset link and signs
// the account in. The link proves the mailbox, so an account whose address
// was never verified is first claimed (claimMailbox: whatever a registrant
// of someone else's address set up is taken away). Every other session of
// the account is revoked and every other reset link spent; the lockout is
// cleared. An unknown, expired or used link is 401, and a password the
// policy refuses a 400 that leaves the link usable: nothing changes.
func (s *Service) ResetPassword(ctx context.Context, secret, next string, meta gatehouse.SessionMeta) (*SignIn, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	if err := checkPassword("new_password", next); err != nil {
		return nil, err
	}
	hash := token.Hash(secret)
	// Read first, so that the policy (which needs the address) and the
	// 20 ms of argon2 happen outside the transaction.
	t, err := s.store.PeekEmailToken(ctx, hash, PurposePasswordReset, s.Now())
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && t.UserID == "") {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("find reset link", err)
	}
	if err := checkNewPassword("new_password", next, t.Email); err != nil {
		return nil, err
	}
	pwHash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return nil, internal("hash password", err)
	}
	var out *SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		var err error
		out, err = s.resetInTx(ctx, tx, t.UserID, hash, pwHash, meta)
		return err
	})
	if out != nil {
		s.users.Drop(out.User.ID)
		s.lockout.clear(gatehouse.EmailKey(out.User.Email))
	}
	return out, err
}

// resetInTx is ResetPassword's one transaction for the account userID
// that the link named when it was read: the account's row lock first (so
// concurrent resets of one account queue instead of deadlocking over each
// other's links), then the link is used (one winner under concurrency),
// the account claimed and pinned, the password set, the other sessions and
// reset links ended, and a session opened.
func (s *Service) resetInTx(ctx context.Context, tx Store, userID, hash, pwHash string, meta gatehouse.SessionMeta) (*SignIn, error) {
	now := s.Now()
	err := tx.LockUser(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("lock user", err)
	}
	t, err := tx.UseEmailToken(ctx, hash, PurposePasswordReset, now)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && t.UserID != userID) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("use reset link", err)
	}
	u, err := tx.UserByID(ctx, t.UserID)
	if err == nil {
		u, err = s.claimMailbox(ctx, tx, u, gatehouse.ViaMagicLink)
	}
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && u.Email != t.Email) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	if err := tx.ReplacePasswordHash(ctx, u.ID, u.PasswordHash, pwHash); errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Errorf(gatehouse.KindConflict, "the password was changed meanwhile; try again")
	} else if err != nil {
		return nil, internal("set password", err)
	}
	u.PasswordHash = pwHash
	if err := tx.RevokeUserSessions(ctx, u.ID, "", now); err != nil {
		return nil, internal("revoke sessions", err)
	}
	if err := tx.SpendEmailTokens(ctx, u.ID, PurposePasswordReset, now); err != nil {
		return nil, internal("spend reset links", err)
	}
	oc, err := s.ws.HomeOrg(ctx, tx, u)
	if err != nil {
		return nil, err
	}
	if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.password_reset", "user", u.ID, nil); err != nil {
		return nil, internal("audit", err)
	}
	// Seam for issue 13 item 4: an account with a second factor gets this
	// session at aal1 (recovery never bypasses the second factor); the
	// level is decided where sessions start, for every way of signing in.
	return s.startSession(ctx, tx, u, oc, gatehouse.ViaMagicLink, meta)
}
