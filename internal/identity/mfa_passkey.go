package identity

import (
	"context"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
)

// Passkeys in the second-factor step, and the level a passkey sign-in
// starts at.

// BeginPasskeyStep starts the passkey option of the second-factor step
// for a session owing it: an assertion by one of the account's passkeys
// (allowCredentials lists them).
func (s *Service) BeginPasskeyStep(ctx context.Context, p *gatehouse.Principal) (*PasskeyOptions, error) {
	if !p.Pending {
		return nil, errNotPending
	}
	return s.BeginPasskeyCheck(ctx, p.UserID)
}

// passkeyStep is factorCheck of a passkey: the attempt counts like a
// code's, the assertion is checked against a ceremony begun for this
// account, and the returned write takes the ceremony and records the
// passkey's use in the step's transaction (so the ceremony is used once).
func (s *Service) passkeyStep(ctx context.Context, userID string, st Step) (func(tx Store, now time.Time) error, string, error) {
	if st.CeremonyID == "" || len(st.Credential) == 0 {
		return nil, "", gatehouse.Invalid("ceremony_id and credential are required for a passkey")
	}
	if err := s.stepTx(ctx, func(tx Store) error { return s.attempt(ctx, tx, userID, s.Now()) }); err != nil {
		return nil, "", err
	}
	a, err := s.assertPasskey(ctx, st.CeremonyID, userID, st.Credential)
	if err != nil {
		return nil, "", err
	}
	return func(tx Store, _ time.Time) error {
		return s.recordAssertion(ctx, tx, a)
	}, passkeyAMR(a.cred), nil
}

// passkeyAMR is the RFC 8176 method of a passkey: "swk" (a key held in
// software and synced between devices) when it may be backed up, else
// "hwk" (a key bound to one device's hardware).
func passkeyAMR(cred *webauthn.Credential) string {
	if cred.Flags.BackupEligible {
		return gatehouse.AMRSoftwareKey
	}
	return gatehouse.AMRHardwareKey
}

// passkeyLevel is the level of a sign-in by a passkey alone: with user
// verification the authenticator checked something the person knows or is
// besides the key they hold, so it is two factors (aal2, amr [hwk|swk,
// mfa]); without it one, and the account's second factor is owed as after
// a password.
func passkeyLevel(a *assertion) gatehouse.Assurance {
	amr := passkeyAMR(a.cred)
	if a.verified {
		return gatehouse.Assurance{AAL: gatehouse.AAL2, AMR: []string{amr, gatehouse.AMRMFA}}
	}
	return gatehouse.Assurance{AAL: gatehouse.AAL1, AMR: []string{amr}}
}

// factorsOf lists the second factors of userID a sign-in may take its step
// with: the confirmed factors and recovery codes, and the account's
// passkeys once it has a factor; none when two-factor is off.
func (s *Service) factorsOf(ctx context.Context, st Store, userID string) ([]string, error) {
	kinds, err := st.UserFactors(ctx, userID)
	if err != nil || len(kinds) == 0 {
		return kinds, err
	}
	pks, err := st.ListPasskeys(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(pks) > 0 {
		kinds = append(kinds, FactorPasskey)
	}
	return kinds, nil
}

// endOtherSessions ends the caller's other sessions when a factor is added
// or removed (ASVS 7.4.3): a session opened with a credential the person
// no longer trusts (or before the one they just added) does not go on.
func (s *Service) endOtherSessions(ctx context.Context, tx Store, p *gatehouse.Principal) error {
	if err := tx.RevokeUserSessions(ctx, p.UserID, p.SessionID, s.Now()); err != nil {
		return internal("revoke sessions", err)
	}
	return nil
}
