package identity

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"

	"golang.org/x/text/language"
)

// errBadReset is the one answer to a reset link that is unknown, expired,
// used, or whose account is gone or has another address now.
var errBadReset = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")

// RecoveryFloor is the least time RequestRecovery takes for a well-formed
// address. A known address's request queues a mail in its transaction
// and an unknown one's does not, which took about twice as long (a few
// milliseconds): every request is held to this floor, well above the
// known path's usual time, so that the time of the answer does not tell
// which addresses have accounts (docs/decisions.md).
const RecoveryFloor = 100 * time.Millisecond

// RequestRecovery mails the account at email a single-use link to set a
// new password (RecoveryTTL). A well-formed address answers nil whether or
// not it has an account, after the same work and the same time: the
// account is looked up and one token row is written either way (an
// unknown address's row names no account, is sent to no one and can never
// be used); a known address's mail is queued in the same transaction (one
// more row) and sent by the job engine; and the answer waits until
// RecoveryFloor has passed since the request began. A malformed address
// is a 400; past the address's budget (LimitAddresses), known or not, it
// is a KindTooMany error at once.
func (s *Service) RequestRecovery(ctx context.Context, email string) error {
	key, email, err := gatehouse.ParseEmail(email)
	if err != nil {
		return err
	}
	if ok, wait := s.recoverPerEmail.Allow(key); !ok {
		return gatehouse.TooMany(wait)
	}
	// Wall time, not the service's clock: the floor is about how long
	// the answer takes, which an injected clock does not measure.
	start := time.Now()
	if err := s.requestRecovery(ctx, key, email); err != nil {
		return err
	}
	t := time.NewTimer(time.Until(start.Add(RecoveryFloor)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// requestRecovery is RequestRecovery's work, without the floor.
func (s *Service) requestRecovery(ctx context.Context, key, email string) error {
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
		s.event(ctx, gatehouse.EventRecoveryRequest, slog.String("user_id", u.ID))
	} else {
		s.event(ctx, gatehouse.EventRecoveryRequest, slog.String("reason", "unknown account"))
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if err := tx.CreateEmailToken(ctx, t); err != nil {
			return internal("create reset link", err)
		}
		if u == nil {
			return nil
		}
		if err := tx.QueueMail(ctx, s.resetMail(i18n.For(ctx, u.Language), u.Email, secret)); err != nil {
			return internal("queue reset mail", err)
		}
		return nil
	})
}

// resetMail is the message that carries a password reset link.
func (s *Service) resetMail(lang language.Tag, email, secret string) mail.Message {
	link := s.webURL + "/reset-password?token=" + url.QueryEscape(secret)
	return mail.Message{To: email, Subject: i18n.Tf(lang, "Set a new %s password", s.brand.Product()),
		Text: i18n.Tf(lang, "Someone asked to set a new password for the %s account of this address. If it was you, open this link to choose one:\n\n%s\n\n"+
			"The link works once and expires in 1 hour. Setting a new password signs you out everywhere else and revokes your personal API keys.\n\nIf you did not ask for it, ignore this message: your password stays as it is.\n",
			s.brand.Product(), link)}
}

// errFactorOwed answers a reset of an account with a second factor that
// presents none: the link alone does not set the password.
var errFactorOwed = gatehouse.Errorf(gatehouse.KindForbidden,
	"this account has two-factor authentication: give a code from your authenticator app or a recovery code")

// Reset is what a reset link's form presents: the link's token, the new
// password and, for an account with a second factor, that factor in the
// shape of the sign-in's second step (method and code, or a passkey's
// assertion).
type Reset struct {
	Token       string `json:"token"`
	NewPassword string `json:"new_password"`
	Step
}

// ResetPassword sets a new password with an emailed reset link and signs
// the account in. The link proves the mailbox, so an account whose address
// was never verified is first claimed (claimMailbox: whatever a registrant
// of someone else's address set up is taken away). An account whose
// address is verified and that has a second factor must present it too
// (ResetFactors), before anything changes: without it the answer is 403,
// and a wrong one 401 and counted like the sign-in's step, against the
// same per-account limit; neither spends the link. Then every other
// session of the account is revoked, every other reset link spent and
// its personal API keys revoked; the lockout is cleared. An unknown,
// expired or used link is 401, and a password the policy refuses a 400
// that leaves the link usable: nothing changes.
func (s *Service) ResetPassword(ctx context.Context, in Reset, meta gatehouse.SessionMeta) (*SignIn, error) {
	si, err := s.resetPassword(ctx, in, meta)
	if err != nil {
		s.event(ctx, gatehouse.EventRecoveryRefused, reason(err))
		return nil, err
	}
	sid, _ := splitRefresh(si.RefreshToken)
	s.event(ctx, gatehouse.EventRecoveryReset, slog.String("user_id", si.User.ID), slog.String("session_id", sid),
		slog.String("second_factor", in.Method))
	return si, nil
}

// resetPassword is ResetPassword without its events.
func (s *Service) resetPassword(ctx context.Context, in Reset, meta gatehouse.SessionMeta) (*SignIn, error) {
	if in.Token == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	if err := checkPassword("new_password", in.NewPassword); err != nil {
		return nil, err
	}
	hash := token.Hash(in.Token)
	// Read first, so that the policy (which needs the address), the
	// factor's check and the 20 ms of argon2 happen outside the
	// transaction.
	t, owed, err := s.peekReset(ctx, hash)
	if err != nil {
		return nil, err
	}
	if err := checkNewPassword("new_password", in.NewPassword, t.Email); err != nil {
		return nil, err
	}
	var f *factorUse
	if len(owed) > 0 {
		if in.Method == "" {
			return nil, errFactorOwed
		}
		if f, err = s.factorCheck(ctx, t.UserID, "", in.Step); err != nil {
			return nil, err
		}
	}
	pwHash, err := s.hasher.Hash(ctx, in.NewPassword)
	if err != nil {
		return nil, internal("hash password", err)
	}
	var out *SignIn
	err = s.stepTx(ctx, func(tx Store) error {
		var err error
		out, err = s.resetInTx(ctx, tx, t.UserID, hash, pwHash, f, meta)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.users.Drop(out.User.ID)
	s.lockout.clear(gatehouse.EmailKey(out.User.Email))
	return out, nil
}

// ResetFactors answers the second factors a reset link's account must
// present with the new password (none when it has none, or when its
// address was never verified: the link's claim takes away what a
// registrant set up), so that the form can ask for one. An unknown,
// expired or used link is 401. It reads only: the link stays usable.
func (s *Service) ResetFactors(ctx context.Context, secret string) ([]string, error) {
	if secret == "" {
		return nil, errBadReset
	}
	_, owed, err := s.peekReset(ctx, token.Hash(secret))
	return owed, err
}

// BeginResetPasskey starts the passkey option of a reset link's factor:
// an assertion by one of the account's passkeys (allowCredentials lists
// them), for an account that owes a factor and has a passkey; 400
// otherwise. It reads the link only.
func (s *Service) BeginResetPasskey(ctx context.Context, secret string) (*PasskeyOptions, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	t, owed, err := s.peekReset(ctx, token.Hash(secret))
	if err != nil {
		return nil, err
	}
	if !slices.Contains(owed, FactorPasskey) {
		return nil, gatehouse.Invalid("this account has no passkey to give as its second factor")
	}
	return s.BeginPasskeyCheck(ctx, t.UserID)
}

// peekReset reads the reset link of hash, unused and unexpired, and the
// second factors its account owes.
func (s *Service) peekReset(ctx context.Context, hash string) (*EmailToken, []string, error) {
	t, err := s.store.PeekEmailToken(ctx, hash, PurposePasswordReset, s.Now())
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && t.UserID == "") {
		return nil, nil, errBadReset
	}
	if err != nil {
		return nil, nil, internal("find reset link", err)
	}
	u, err := s.store.UserByID(ctx, t.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, errBadReset
	}
	if err != nil {
		return nil, nil, internal("find user", err)
	}
	// A workspace enforcing SSO for the address lets only its owners
	// reset a password (the break-glass path). Asked here, before any
	// transaction: the gate reads on a connection of its own.
	if err := s.allowSignIn(ctx, MethodPassword, u.ID, u.EmailKey); err != nil {
		return nil, nil, err
	}
	if !u.EmailVerified {
		return t, nil, nil
	}
	owed, err := s.factorsOf(ctx, s.store, u.ID, "")
	if err != nil {
		return nil, nil, internal("find factors", err)
	}
	return t, owed, nil
}

// resetInTx is ResetPassword's one transaction (a step's: see stepTx)
// for the account userID that the link named when it was read: the
// factor's attempt counted first when one is presented (f), then the
// account's row lock (so concurrent resets of one account queue instead
// of deadlocking over each other's links), then the factor spent (a
// refusal commits the count alone: the link stays usable), the link used
// (one winner under concurrency), the account claimed and pinned, the
// password set, the other sessions, reset links and personal API keys
// ended, and a session opened: at aal2 after a factor, since the link
// proved the mailbox and the factor the rest.
func (s *Service) resetInTx(ctx context.Context, tx Store, userID, hash, pwHash string, f *factorUse, meta gatehouse.SessionMeta) (*SignIn, error) {
	now := s.Now()
	if f != nil && f.count {
		if err := s.attempt(ctx, tx, userID, now); err != nil {
			return nil, err
		}
	}
	err := tx.LockUser(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("lock user", err)
	}
	if f != nil {
		if err := f.use(tx, now); err != nil {
			return nil, refuse(err)
		}
		if err := tx.ClearMFAAttempts(ctx, userID); err != nil {
			return nil, internal("clear attempts", err)
		}
	}
	t, err := tx.UseEmailToken(ctx, hash, PurposePasswordReset, now)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && t.UserID != userID) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("use reset link", err)
	}
	u, err := tx.UserByID(ctx, t.UserID)
	verified := err == nil && u.EmailVerified
	if err == nil {
		u, err = s.claimMailbox(ctx, tx, u, gatehouse.ViaMagicLink)
	}
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && u.Email != t.Email) {
		return nil, errBadReset
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	if f == nil && verified {
		// A factor added since the link was read is owed as well.
		if owed, err := s.factorsOf(ctx, tx, u.ID, ""); err != nil {
			return nil, internal("find factors", err)
		} else if len(owed) > 0 {
			return nil, errFactorOwed
		}
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
	keys, err := tx.RevokePersonalKeys(ctx, u.ID, now)
	if err != nil {
		return nil, internal("revoke keys", err)
	}
	if err := tx.QueueMail(ctx, s.noticeMail(i18n.For(ctx, u.Language), u.Email, i18n.T(i18n.For(ctx, u.Language), NoticePasswordReset))); err != nil {
		return nil, internal("queue security notice", err)
	}
	oc, err := s.ws.HomeOrg(ctx, tx, u)
	if err != nil {
		return nil, err
	}
	auditMeta := map[string]any{"api_keys_revoked": keys}
	if f != nil {
		auditMeta["factor"] = f.amr
	}
	if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.password_reset", "user", u.ID, auditMeta); err != nil {
		return nil, internal("audit", err)
	}
	if f == nil {
		return s.startSession(ctx, tx, u, oc, gatehouse.ViaMagicLink, meta)
	}
	return s.openSession(ctx, tx, u, oc, s.newSession(u.ID, gatehouse.ViaMagicLink, raised(gatehouse.Assurance{}.Level(gatehouse.ViaMagicLink), f.amr), meta))
}
