package identity

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse"
)

// claimMailbox is what every proof of the mailbox does to the account of
// its address (a magic link today; SSO or an upstream identity later): it
// runs in the transaction that signs the prover in and returns the user,
// pinned until that transaction ends.
//
// An address never verified may have been registered by someone else with
// a password of their choosing (account pre-takeover). So before the
// address is marked verified, everything such a registrant could hold is
// taken away: the password, every session (their refresh tokens and OAuth
// sessions), every OAuth grant, every API key the account holds or created,
// every webhook it created, and every other credential (removeCredentials:
// second factors, recovery codes, passkeys, begun ceremonies); the default
// workspace goes back to the personal one. The owner then signs in with
// no second factor and sets a password without a current one. An address
// already verified is left as it is.
//
// The user's row lock serializes concurrent proofs, and a concurrent
// confirmation, password change or deletion: the later proof reads the
// address verified and changes nothing.
func (s *Service) claimMailbox(ctx context.Context, tx Store, u *gatehouse.User, via string) (*gatehouse.User, error) {
	var err error
	if !u.EmailVerified {
		// Verified never turns back to unverified, so only this case
		// needs the write lock; taken before the pin (a share lock) so
		// that two proofs queue instead of deadlocking.
		err = tx.LockUser(ctx, u.ID)
	}
	if err == nil {
		u, err = tx.PinUser(ctx, u.ID)
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, err // deleted meanwhile
	}
	if err != nil {
		return nil, internal("lock user", err)
	}
	if u.EmailVerified {
		return u, nil
	}
	now := s.Now()
	meta := map[string]any{"via": via}
	if err := disarm(ctx, tx, u, now, meta); err != nil {
		return nil, err
	}
	u.PasswordHash, u.DefaultOrgID = "", ""
	u.EmailVerified, u.UpdatedAt = true, now
	if err := tx.UpdateUser(ctx, u); err != nil {
		return nil, internal("verify email", err)
	}
	o, err := s.ws.PersonalOrg(ctx, tx, u)
	if err != nil {
		return nil, err
	}
	if err := s.ws.Audit(ctx, tx, o.ID, u.ID, "user.email_verified", "user", u.ID, meta); err != nil {
		return nil, internal("audit", err)
	}
	s.log.Info("unverified account claimed by a proof of its mailbox; earlier credentials revoked", "user_id", u.ID, "via", via)
	// Domain auto-join was withheld until now.
	if err := s.ws.AutoJoin(ctx, tx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// disarm takes from u's account everything that signs in or acts as it:
// the password, every session, OAuth grant, API key and webhook it made,
// and the other credentials (removeCredentials); the default workspace
// goes back to the personal one. A claim of the mailbox does it, and so
// does the undo of an email change. It adds what it removed to meta.
func disarm(ctx context.Context, tx Store, u *gatehouse.User, now time.Time, meta map[string]any) error {
	var err error
	meta["password_removed"] = u.PasswordHash != ""
	if u.PasswordHash != "" {
		if err := tx.ReplacePasswordHash(ctx, u.ID, u.PasswordHash, ""); err != nil {
			return internal("remove password", err)
		}
	}
	if err := tx.RevokeUserSessions(ctx, u.ID, "", now); err != nil {
		return internal("revoke sessions", err)
	}
	if meta["grants_revoked"], err = tx.RevokeUserGrants(ctx, u.ID, now); err != nil {
		return internal("revoke grants", err)
	}
	if meta["api_keys_revoked"], err = tx.RevokeUserKeys(ctx, u.ID, now); err != nil {
		return internal("revoke keys", err)
	}
	if meta["webhooks_disabled"], err = tx.DisableUserWebhooks(ctx, u.ID, now); err != nil {
		return internal("disable webhooks", err)
	}
	if err := removeCredentials(ctx, tx, u.ID, meta); err != nil {
		return err
	}
	if err := tx.SetDefaultOrg(ctx, u.ID, ""); err != nil {
		return internal("reset default org", err)
	}
	return nil
}

// removeCredentials is the part of a claim that deletes what a registrant
// could sign in with, or block the owner with, besides the password and
// sessions: TOTP factors (confirmed, or an enrolment begun), recovery
// codes, passkeys (a squatter's passkey then finds no row on any instance,
// and its sessions are revoked already), begun passkey ceremonies and the
// second-factor attempt count. It adds how many of each it removed to
// meta. Every new kind of credential an account can hold is removed here
// too: linked upstream identities (SSO, social sign-in) are.
func removeCredentials(ctx context.Context, tx Store, userID string, meta map[string]any) error {
	var err error
	if meta["factors_removed"], err = tx.DeleteUserFactors(ctx, userID); err != nil {
		return internal("remove factors", err)
	}
	if meta["recovery_codes_removed"], err = tx.DeleteRecoveryCodes(ctx, userID); err != nil {
		return internal("remove recovery codes", err)
	}
	if meta["passkeys_removed"], err = tx.DeleteUserPasskeys(ctx, userID); err != nil {
		return internal("remove passkeys", err)
	}
	if meta["ceremonies_removed"], err = tx.DeleteUserCeremonies(ctx, userID); err != nil {
		return internal("remove passkey ceremonies", err)
	}
	if meta["identities_unlinked"], err = tx.DeleteUserIdentities(ctx, userID); err != nil {
		return internal("unlink identities", err)
	}
	if err := tx.ClearMFAAttempts(ctx, userID); err != nil {
		return internal("clear attempts", err)
	}
	return nil
}
