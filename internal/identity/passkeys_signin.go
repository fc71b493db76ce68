package identity

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
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
// opens a session, as a password login does. Everything but the writes
// (the workspace, the factors owed, the tokens) is read and computed
// before the write transaction: on SQLite the finishes queue for the one
// writer, and its transaction holds it through the commit's sync.
func (s *Service) FinishPasskeySignIn(ctx context.Context, ceremonyID string, response []byte, meta gatehouse.SessionMeta) (*SignIn, error) {
	a, err := s.assertPasskey(ctx, ceremonyID, "", response)
	if err != nil {
		s.signInOutcome(ctx, MethodPasskey, nil, "", err)
		return nil, err
	}
	out, err := s.passkeySession(ctx, a, meta)
	s.signInOutcome(ctx, MethodPasskey, out, a.user.ID, err)
	if err != nil {
		s.dropCeremony(ctx, a.ceremony)
		return nil, err
	}
	return out, nil
}

// passkeySession opens the session of checked assertion a: its one write
// transaction uses the ceremony, records the passkey's use (where the
// sign count must still move forward), stores the session and audits.
func (s *Service) passkeySession(ctx context.Context, a *assertion, meta gatehouse.SessionMeta) (*SignIn, error) {
	oc, err := s.ws.HomeOrgRead(ctx, s.store, a.user, a.home, a.homeRole)
	if err != nil {
		return nil, err
	}
	out, sess, err := s.signInAt(ctx, s.store, a.user, oc, gatehouse.ViaPasskey, passkeyLevel(a), a.pk.ID, meta)
	if err != nil {
		return nil, err
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := s.recordAssertion(ctx, tx, a); err != nil {
			return err
		}
		if err := tx.CreateSession(ctx, sess); err != nil {
			return internal("create session", err)
		}
		return s.auditSignIn(ctx, tx, out, MethodPasskey, meta)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BeginPasskeyCheck starts an assertion by one of userID's passkeys (the
// second factor after a password): allowCredentials lists them.
func (s *Service) BeginPasskeyCheck(ctx context.Context, userID string) (*PasskeyOptions, error) {
	return s.beginPasskeyCheck(ctx, userID, "")
}

// beginPasskeyCheck is BeginPasskeyCheck leaving out the passkey skip
// (the one a sign-in's first step was; "" for none).
func (s *Service) beginPasskeyCheck(ctx context.Context, userID, skip string) (*PasskeyOptions, error) {
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
	if i := slices.Index(pu.ids, skip); skip != "" && i >= 0 {
		pu.creds = slices.Delete(pu.creds, i, i+1)
		if len(pu.creds) == 0 {
			return nil, gatehouse.Invalid("the account has no other passkey: the one you signed in with cannot also be your second factor")
		}
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
	a, err := s.assertPasskey(ctx, ceremonyID, userID, response)
	if err != nil {
		return nil, err
	}
	if err := s.store.Tx(ctx, func(tx Store) error { return s.recordAssertion(ctx, tx, a) }); err != nil {
		s.dropCeremony(ctx, a.ceremony)
		return nil, err
	}
	return a.pk, nil
}

// assertion is a checked passkey assertion, not yet recorded.
type assertion struct {
	pk       *Passkey
	cred     *webauthn.Credential
	user     *gatehouse.User
	ceremony string // the ceremony's id hash, taken when the assertion is recorded
	// verified is this assertion's UV flag (the credential's own flag is
	// latched at its first verification).
	verified bool
	// home is the account's default workspace and role there as read
	// with the passkey (nil: not read, or none).
	home     *workspace.Org
	homeRole string
	// session is the stored session the assertion was checked against
	// when the ceremony id carried it (nil when it was read): the
	// ceremony taken must hold exactly it.
	session []byte
}

// assertPasskey checks an assertion against the login ceremony it names,
// read without being used: a checked assertion uses it when it is recorded
// (recordAssertion, in the caller's transaction, so a success costs one
// write transaction), a refused one at once. userID is the account a
// check was begun for, "" for a usernameless sign-in. A malformed response
// is 400 and a ceremony unknown, used, expired or of another account 400;
// an unknown passkey, a bad signature, another RP id or origin, or a sign
// count that went back (a cloned authenticator) 401.
func (s *Service) assertPasskey(ctx context.Context, ceremonyID, userID string, response []byte) (*assertion, error) {
	if s.rp == nil {
		return nil, errNoPasskeys
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, errPasskeyInvalid
	}
	if session, raw, ok := s.hintedCeremony(ceremonyID); ok && userID == "" {
		return s.assertHinted(ctx, ceremonyID, session, raw, parsed)
	}
	c, session, err := s.readCeremony(ctx, ceremonyID, CeremonyLogin, s.store.PeekCeremony)
	if err != nil {
		return nil, err
	}
	a, err := s.checkAssertion(ctx, c, session, userID, parsed)
	if err != nil {
		s.dropCeremony(ctx, c.IDHash)
		return nil, err
	}
	return a, nil
}

// assertHinted is assertPasskey for a usernameless ceremony whose id
// carries its session (raw as stored): the assertion is checked without
// reading the ceremony, which recordAssertion uses, and compares, in the
// transaction. A refused assertion reads it to answer as assertPasskey
// would: 400 for a ceremony unknown, used or expired, else 401 and the
// ceremony used up.
func (s *Service) assertHinted(ctx context.Context, id string, session *webauthn.SessionData, raw []byte,
	parsed *protocol.ParsedCredentialAssertionData) (*assertion, error) {
	c := &Ceremony{IDHash: token.Hash(id), Kind: CeremonyLogin}
	a, err := s.checkAssertion(ctx, c, session, "", parsed)
	if err != nil {
		if _, _, rerr := s.readCeremony(ctx, id, CeremonyLogin, s.store.PeekCeremony); rerr != nil {
			return nil, rerr
		}
		s.dropCeremony(ctx, c.IDHash)
		return nil, err
	}
	a.session = raw
	return a, nil
}

// checkAssertion is assertPasskey's check of parsed against ceremony c.
func (s *Service) checkAssertion(ctx context.Context, c *Ceremony, session *webauthn.SessionData, userID string,
	parsed *protocol.ParsedCredentialAssertionData) (*assertion, error) {
	if c.UserID != userID {
		return nil, errCeremony
	}
	var pk *Passkey
	var pu *passkeyUser
	var home *workspace.Org
	var homeRole string
	if userID == "" {
		// The passkey, its account and the account's default workspace
		// in one read (none: an unknown passkey, or its account deleted
		// meanwhile).
		acct, err := s.store.PasskeyOwner(ctx, parsed.RawID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, errPasskeyFailed
		}
		if err != nil {
			return nil, internal("find passkey", err)
		}
		pk, pu = acct.Passkey, &passkeyUser{u: acct.User, creds: []webauthn.Credential{acct.Passkey.credential()}}
		home, homeRole = acct.Home, acct.HomeRole
	} else {
		p, err := s.store.PasskeyByCredentialID(ctx, parsed.RawID)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && p.UserID != userID) {
			return nil, errPasskeyFailed
		}
		if err != nil {
			return nil, internal("find passkey", err)
		}
		if pu, err = s.passkeyUser(ctx, userID); err != nil {
			return nil, err
		}
		pk = p
	}
	cred, err := s.validateAssertion(pu, session, parsed)
	if err != nil {
		s.log.Info("passkey assertion refused", "user_id", pk.UserID, "passkey_id", pk.ID, "err", err)
		return nil, errPasskeyFailed
	}
	if cred.Authenticator.CloneWarning {
		s.log.Warn("passkey sign count went back; refused as a possible clone", "user_id", pk.UserID, "passkey_id", pk.ID,
			"stored", pk.SignCount, "presented", parsed.Response.AuthenticatorData.Counter)
		return nil, errPasskeyFailed
	}
	return &assertion{pk: pk, cred: cred, user: pu.u, ceremony: c.IDHash, home: home, homeRole: homeRole,
		verified: parsed.Response.AuthenticatorData.Flags.HasUserVerified()}, nil
}

// recordAssertion uses a's ceremony (of concurrent finishes of one
// ceremony one gets it, the others 400) and records the passkey's use.
func (s *Service) recordAssertion(ctx context.Context, tx Store, a *assertion) error {
	err := tx.UseCeremony(ctx, a.ceremony, CeremonyLogin, s.Now(), a.session)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return errCeremony
	}
	if err != nil {
		return internal("take ceremony", err)
	}
	return s.usePasskey(ctx, tx, a.pk, a.cred)
}

// dropCeremony uses up a ceremony whose finish failed, so that it is
// used once whatever the outcome (best effort: it expires anyway).
func (s *Service) dropCeremony(ctx context.Context, idHash string) {
	if err := s.store.UseCeremony(ctx, idHash, CeremonyLogin, time.Time{}, nil); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
		s.log.Warn("drop passkey ceremony", "err", err)
	}
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
