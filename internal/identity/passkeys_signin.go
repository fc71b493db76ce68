package identity

import (
	"bytes"
	"context"
	"errors"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
)

// BeginPasskeySignIn starts a usernameless sign-in: no allowCredentials,
// so the browser offers the discoverable passkeys it holds for the RP id
// (also through conditional UI, which only the client's call differs in).
func (s *Service) BeginPasskeySignIn(ctx context.Context) (*PasskeyOptions, error) {
	if s.rp == nil {
		return nil, errNoPasskeys
	}
	opts, session, err := s.rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, internal("begin sign-in", err)
	}
	return s.beginCeremony(ctx, CeremonyLogin, "", session, opts.Response)
}

// FinishPasskeySignIn checks the assertion of a usernameless sign-in and
// opens a session, as a password login does.
func (s *Service) FinishPasskeySignIn(ctx context.Context, ceremonyID string, response []byte, meta gatehouse.SessionMeta) (*SignIn, error) {
	pk, cred, u, err := s.assertPasskey(ctx, ceremonyID, "", response)
	if err != nil {
		return nil, err
	}
	var out *SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := s.usePasskey(ctx, tx, pk, cred); err != nil {
			return err
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		// Seam for issue 13 item 4: a passkey with user verification is
		// two factors, so this session starts at aal2 with amr "hwk" (or
		// "swk" for a synced passkey, cred.Flags.BackupEligible) and "mfa";
		// the merger sets the level where sessions start.
		out, err = s.startSession(ctx, tx, u, oc, gatehouse.ViaPasskey, meta)
		return err
	})
	return out, err
}

// BeginPasskeyCheck starts an assertion by one of userID's passkeys (the
// second factor after a password): allowCredentials lists them.
func (s *Service) BeginPasskeyCheck(ctx context.Context, userID string) (*PasskeyOptions, error) {
	if s.rp == nil {
		return nil, errNoPasskeys
	}
	pu, err := s.passkeyUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(pu.creds) == 0 {
		return nil, gatehouse.Invalid("the account has no passkey")
	}
	opts, session, err := s.rp.BeginLogin(pu, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, internal("begin passkey check", err)
	}
	return s.beginCeremony(ctx, CeremonyLogin, userID, session, opts.Response)
}

// VerifyPasskey checks an assertion of a ceremony begun for userID (by
// BeginPasskeyCheck) and records the passkey's use; the second-factor
// step calls it. A passkey of another account is refused.
func (s *Service) VerifyPasskey(ctx context.Context, userID, ceremonyID string, response []byte) (*Passkey, error) {
	if userID == "" {
		return nil, errPasskeyFailed
	}
	pk, cred, _, err := s.assertPasskey(ctx, ceremonyID, userID, response)
	if err != nil {
		return nil, err
	}
	if err := s.usePasskey(ctx, s.store, pk, cred); err != nil {
		return nil, err
	}
	return pk, nil
}

// assertPasskey checks an assertion against the login ceremony it names
// (used once, whatever the outcome) and returns the passkey, the checked
// credential and its account. userID is the account a check was begun for,
// "" for a usernameless sign-in. A malformed response is 400 and a
// ceremony unknown, used, expired or of another account 400; an unknown
// passkey, a bad signature, another RP id or origin, or a sign count that
// went back (a cloned authenticator) 401.
func (s *Service) assertPasskey(ctx context.Context, ceremonyID, userID string, response []byte) (*Passkey, *webauthn.Credential, *gatehouse.User, error) {
	if s.rp == nil {
		return nil, nil, nil, errNoPasskeys
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, nil, nil, errPasskeyInvalid
	}
	c, session, err := s.takeCeremony(ctx, ceremonyID, CeremonyLogin)
	if err != nil {
		return nil, nil, nil, err
	}
	if c.UserID != userID {
		return nil, nil, nil, errCeremony
	}
	pk, err := s.store.PasskeyByCredentialID(ctx, parsed.RawID)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && userID != "" && pk.UserID != userID) {
		return nil, nil, nil, errPasskeyFailed
	}
	if err != nil {
		return nil, nil, nil, internal("find passkey", err)
	}
	var pu *passkeyUser
	if userID == "" {
		u, err := s.store.UserByID(ctx, pk.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, nil, nil, errPasskeyFailed // deleted meanwhile
		}
		if err != nil {
			return nil, nil, nil, internal("find user", err)
		}
		pu = &passkeyUser{u: u, creds: []webauthn.Credential{pk.credential()}}
	} else if pu, err = s.passkeyUser(ctx, userID); err != nil {
		return nil, nil, nil, err
	}
	cred, err := s.validateAssertion(pu, session, parsed)
	if err != nil {
		s.log.Info("passkey assertion refused", "user_id", pk.UserID, "passkey_id", pk.ID, "err", err)
		return nil, nil, nil, errPasskeyFailed
	}
	if cred.Authenticator.CloneWarning {
		s.log.Warn("passkey sign count went back; refused as a possible clone", "user_id", pk.UserID, "passkey_id", pk.ID,
			"stored", pk.SignCount, "presented", parsed.Response.AuthenticatorData.Counter)
		return nil, nil, nil, errPasskeyFailed
	}
	return pk, cred, pu.u, nil
}

// validateAssertion runs go-webauthn's checks for a usernameless ceremony
// (the user handle must be the passkey's account) or a check of a known
// account.
func (s *Service) validateAssertion(pu *passkeyUser, session *webauthn.SessionData, parsed *protocol.ParsedCredentialAssertionData) (*webauthn.Credential, error) {
	if len(session.UserID) == 0 {
		_, cred, err := s.rp.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			if !bytes.Equal(handle, pu.WebAuthnID()) {
				return nil, errors.New("user handle is not the passkey's account")
			}
			return pu, nil
		}, *session, parsed)
		return cred, err
	}
	return s.rp.ValidateLogin(pu, *session, parsed)
}

// usePasskey records a checked assertion: the new sign count, flags and
// last use, only if the count still moves forward (or stays 0, as synced
// passkeys report), so of two assertions with one count only one counts.
func (s *Service) usePasskey(ctx context.Context, st Store, pk *Passkey, cred *webauthn.Credential) error {
	err := st.UsePasskey(ctx, pk.ID, cred.Authenticator.SignCount, cred.Flags.UserVerified, cred.Flags.BackupState, s.Now())
	if errors.Is(err, gatehouse.ErrNotFound) {
		return errPasskeyFailed
	}
	if err != nil {
		return internal("record passkey use", err)
	}
	return nil
}
