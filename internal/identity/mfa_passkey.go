package identity

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
)

// Passkeys in the second-factor step, and the level a passkey sign-in
// starts at.

// errSamePasskey refuses the passkey a sign-in began with as its second
// factor: two factors are two credentials (issue 23 item 5).
var errSamePasskey = gatehouse.Errorf(gatehouse.KindUnauthorized,
	"the passkey you signed in with cannot also be your second factor; use another one, your authenticator app or a recovery code")

// BeginPasskeyStep starts the passkey option of the second-factor step
// for a session owing it: an assertion by one of the account's passkeys
// (allowCredentials lists them) other than the one the sign-in began
// with, if it began with one (400 when no other is left).
func (s *Service) BeginPasskeyStep(ctx context.Context, p *gatehouse.Principal) (*PasskeyOptions, error) {
	if !p.Pending {
		return nil, errNotPending
	}
	skip, err := s.firstPasskey(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return s.beginPasskeyCheck(ctx, p.UserID, skip)
}

// firstPasskey is the passkey whose sign-in opened session sid, "" when
// none did (or the session is gone: the step then refuses it anyway).
func (s *Service) firstPasskey(ctx context.Context, sid string) (string, error) {
	if sid == "" {
		return "", nil
	}
	id, err := s.store.SessionFirstPasskey(ctx, sid)
	if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
		return "", internal("find session", err)
	}
	return id, nil
}

// passkeyStep is factorCheck of a passkey for session sid: the attempt
// counts like a code's, the assertion is checked against a ceremony begun
// for this account, and the returned write takes the ceremony and records
// the passkey's use in the step's transaction (so the ceremony is used
// once). The passkey the session's sign-in began with is refused (401),
// whatever ceremony it answers (one begun by another pending sign-in of
// the account lists it).
func (s *Service) passkeyStep(ctx context.Context, userID, sid string, st Step) (func(tx Store, now time.Time) error, string, error) {
	if st.CeremonyID == "" || len(st.Credential) == 0 {
		return nil, "", gatehouse.Invalid("ceremony_id and credential are required for a passkey")
	}
	if err := s.stepTx(ctx, func(tx Store) error { return s.attempt(ctx, tx, userID, s.Now()) }); err != nil {
		return nil, "", err
	}
	skip, err := s.firstPasskey(ctx, sid)
	if err != nil {
		return nil, "", err
	}
	a, err := s.assertPasskey(ctx, st.CeremonyID, userID, st.Credential)
	if err != nil {
		return nil, "", err
	}
	if skip != "" && a.pk.ID == skip {
		s.dropCeremony(ctx, a.ceremony)
		return nil, "", errSamePasskey
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
// passkeys once it has a factor, other than skip (the passkey the sign-in
// began with, "" for none); none when two-factor is off.
func (s *Service) factorsOf(ctx context.Context, st Store, userID, skip string) ([]string, error) {
	kinds, err := st.UserFactors(ctx, userID)
	if err != nil || len(kinds) == 0 {
		return kinds, err
	}
	pks, err := st.ListPasskeys(ctx, userID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(pks, func(pk Passkey) bool { return pk.ID != skip }) {
		kinds = append(kinds, FactorPasskey)
	}
	return kinds, nil
}

// sessionFactors is factorsOf for the pending session sid of userID.
func (s *Service) sessionFactors(ctx context.Context, userID, sid string) ([]string, error) {
	skip, err := s.firstPasskey(ctx, sid)
	if err != nil {
		return nil, err
	}
	fs, err := s.factorsOf(ctx, s.store, userID, skip)
	if err != nil {
		return nil, internal("find factors", err)
	}
	return fs, nil
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
