package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Passkey bounds and lifetimes (docs/decisions.md).
const (
	CeremonyTTL    = 5 * time.Minute // a begun registration or sign-in
	MaxPasskeyName = 100             // characters
	MaxPasskeys    = 20              // per account
	// Ceremony kinds: a registration, or an assertion (usernameless
	// sign-in, or a second-factor check of a known account).
	CeremonyRegister = "register"
	CeremonyLogin    = "login"
)

// Passkey is a WebAuthn credential of an account.
type Passkey struct {
	ID             string
	UserID         string
	CredentialID   []byte
	PublicKey      []byte // COSE
	SignCount      uint32
	Transports     []string
	AAGUID         []byte
	Attestation    string // the attestation format, "none" for most
	UserVerified   bool
	BackupEligible bool
	BackedUp       bool
	Name           string
	CreatedAt      time.Time
	LastUsedAt     *time.Time
}

// Ceremony is a begun WebAuthn ceremony kept for its finish: the hash of
// the id handed to the client, its kind, the account it is for ("" for a
// usernameless sign-in) and go-webauthn's SessionData as JSON.
type Ceremony struct {
	IDHash    string
	Kind      string
	UserID    string
	Session   []byte
	ExpiresAt time.Time
}

// PasskeyAccount is a passkey read with its account and the account's
// default workspace (nil when it has none or that workspace is gone) with
// the account's role there ("" for none): the reads of a usernameless
// sign-in, in one.
type PasskeyAccount struct {
	Passkey  *Passkey
	User     *gatehouse.User
	Home     *workspace.Org
	HomeRole string
}

// PasskeyOptions is a begun ceremony: its id, to send back with the
// response, and the options for navigator.credentials.create or get.
type PasskeyOptions struct {
	CeremonyID string
	Options    any // PublicKeyCredentialCreationOptions or RequestOptions, as JSON "publicKey"
}

// The answers to a bad ceremony or response (issue 13 "Bad input"):
// nothing is stored and nothing changes.
var (
	errCeremony       = gatehouse.Invalid("invalid, expired or already used passkey challenge")
	errPasskeyInvalid = gatehouse.Invalid("invalid passkey response")
	errPasskeyFailed  = gatehouse.Errorf(gatehouse.KindUnauthorized, "passkey not accepted")
	errNoPasskeys     = gatehouse.Errorf(gatehouse.KindUnavailable, "passkeys are not configured on this server")
)

// newRelyingParty is the WebAuthn relying party of webURL: its host is
// the RP id and its origin the one allowed origin (docs/decisions.md).
func newRelyingParty(webURL string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(webURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("web url %q is not an http(s) origin", webURL)
	}
	return webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "Gatehouse",
		RPOrigins: []string{u.Scheme + "://" + u.Host}})
}

// passkeyUser is an account as go-webauthn sees it: the user handle is
// the account id (opaque, no personal data).
type passkeyUser struct {
	u     *gatehouse.User
	creds []webauthn.Credential
	ids   []string // the passkeys' ids, as creds (passkeyUser fills it)
}

func (p *passkeyUser) WebAuthnID() []byte                         { return []byte(p.u.ID) }
func (p *passkeyUser) WebAuthnName() string                       { return p.u.Email }
func (p *passkeyUser) WebAuthnDisplayName() string                { return p.u.Name }
func (p *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// credential is pk as go-webauthn's record.
func (pk *Passkey) credential() webauthn.Credential {
	tr := make([]protocol.AuthenticatorTransport, len(pk.Transports))
	for i, t := range pk.Transports {
		tr[i] = protocol.AuthenticatorTransport(t)
	}
	return webauthn.Credential{ID: pk.CredentialID, PublicKey: pk.PublicKey, AttestationFormat: pk.Attestation, Transport: tr,
		Flags:         webauthn.CredentialFlags{UserPresent: true, UserVerified: pk.UserVerified, BackupEligible: pk.BackupEligible, BackupState: pk.BackedUp},
		Authenticator: webauthn.Authenticator{AAGUID: pk.AAGUID, SignCount: pk.SignCount}}
}

// beginCeremony stores session under a new random id for CeremonyTTL.
// The library's own expiry reads the wall clock, so it is cleared and the
// row's expiry, on the service clock, is the one checked.
func (s *Service) beginCeremony(ctx context.Context, kind, userID string, session *webauthn.SessionData, options any) (*PasskeyOptions, error) {
	session.Expires = time.Time{}
	raw, err := json.Marshal(session)
	if err != nil {
		return nil, internal("encode ceremony", err)
	}
	id := token.NewSecret("")
	if kind == CeremonyLogin && userID == "" {
		if hint, ok := s.sessionHint(session, raw); ok {
			id += hintSep + hint
		}
	}
	now := s.Now()
	if err := s.store.PurgeCeremonies(ctx, now); err != nil {
		return nil, internal("purge ceremonies", err)
	}
	c := &Ceremony{IDHash: token.Hash(id), Kind: kind, UserID: userID, Session: raw, ExpiresAt: now.Add(CeremonyTTL)}
	if err := s.store.CreateCeremony(ctx, c); err != nil {
		return nil, internal("store ceremony", err)
	}
	return &PasskeyOptions{CeremonyID: id, Options: options}, nil
}

// takeCeremony uses the unexpired ceremony id of kind, once: any instance
// may finish what another began, and a second finish finds nothing.
func (s *Service) takeCeremony(ctx context.Context, id, kind string) (*Ceremony, *webauthn.SessionData, error) {
	return s.readCeremony(ctx, id, kind, s.store.TakeCeremony)
}

// readCeremony reads the unexpired ceremony id of kind with read (the
// store's TakeCeremony, or PeekCeremony when the caller takes it later in
// its own transaction).
func (s *Service) readCeremony(ctx context.Context, id, kind string,
	read func(ctx context.Context, idHash, kind string, at time.Time) (*Ceremony, error)) (*Ceremony, *webauthn.SessionData, error) {
	if id == "" || len(id) > 200 {
		return nil, nil, errCeremony
	}
	c, err := read(ctx, token.Hash(id), kind, s.Now())
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, errCeremony
	}
	if err != nil {
		return nil, nil, internal("read ceremony", err)
	}
	var session webauthn.SessionData
	if err := json.Unmarshal(c.Session, &session); err != nil {
		return nil, nil, internal("decode ceremony", err)
	}
	return c, &session, nil
}

// BeginPasskeyRegistration starts adding a passkey to the caller's
// account: a discoverable credential (so it can sign in without an
// address), user verification preferred, the account's passkeys excluded.
func (s *Service) BeginPasskeyRegistration(ctx context.Context, p *gatehouse.Principal) (*PasskeyOptions, error) {
	if s.rp == nil {
		return nil, errNoPasskeys
	}
	if err := s.RequireRecentAuth(ctx, p, "add a passkey"); err != nil {
		return nil, err
	}
	pu, err := s.passkeyUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if len(pu.creds) >= MaxPasskeys {
		return nil, gatehouse.Errorf(gatehouse.KindConflict, "an account holds at most %d passkeys", MaxPasskeys)
	}
	opts, session, err := s.rp.BeginRegistration(pu,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithExclusions(webauthn.Credentials(pu.creds).CredentialDescriptors()),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation))
	if err != nil {
		return nil, internal("begin registration", err)
	}
	return s.beginCeremony(ctx, CeremonyRegister, p.UserID, session, opts.Response)
}

// FinishPasskeyRegistration checks the authenticator's answer to a
// registration the caller began and stores the passkey as name (default
// "Passkey"). A credential registered already, to any account, is 409; a
// sign-in older than the reauthentication window is 403, as at the start.
func (s *Service) FinishPasskeyRegistration(ctx context.Context, p *gatehouse.Principal, ceremonyID, name string, response []byte) (*Passkey, error) {
	if s.rp == nil {
		return nil, errNoPasskeys
	}
	name, err := passkeyName(name)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, errPasskeyInvalid
	}
	c, session, err := s.takeCeremony(ctx, ceremonyID, CeremonyRegister)
	if err != nil {
		return nil, err
	}
	if c.UserID != p.UserID {
		return nil, errCeremony
	}
	pu, err := s.passkeyUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	cred, err := s.rp.CreateCredential(pu, *session, parsed)
	if err != nil {
		s.log.Info("passkey registration refused", "user_id", p.UserID, "err", err)
		return nil, errPasskeyInvalid
	}
	pk := &Passkey{ID: gatehouse.NewID(), UserID: p.UserID, CredentialID: cred.ID, PublicKey: cred.PublicKey, SignCount: cred.Authenticator.SignCount,
		AAGUID: cred.Authenticator.AAGUID, Attestation: cred.AttestationFormat, UserVerified: cred.Flags.UserVerified,
		BackupEligible: cred.Flags.BackupEligible, BackedUp: cred.Flags.BackupState, Name: name, CreatedAt: s.Now()}
	for _, t := range cred.Transport {
		pk.Transports = append(pk.Transports, string(t))
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		// The account's row, then the caller's session: a mailbox claim
		// (which locks the row, removes the passkeys and revokes the
		// sessions) either committed before, and the session reads
		// revoked, or waits for this commit and removes this passkey too.
		// The sign-in must still be recent when the passkey is stored,
		// not only when the ceremony began (issue 23 item 7).
		if _, err := tx.PinUser(ctx, p.UserID); err != nil {
			return errSessionEnded
		}
		if err := s.recentSession(ctx, tx, p, "add a passkey"); err != nil {
			return err
		}
		if err := tx.CreatePasskey(ctx, pk); errors.Is(err, gatehouse.ErrConflict) {
			return gatehouse.Errorf(gatehouse.KindConflict, "this passkey is registered already")
		} else if err != nil {
			return internal("store passkey", err)
		}
		if err := s.endOtherSessions(ctx, tx, p); err != nil {
			return err
		}
		if err := s.auditPasskey(ctx, tx, p, "user.passkey_added", pk.ID, map[string]any{"name": pk.Name}); err != nil {
			return err
		}
		return s.notify(ctx, tx, p.UserID, NoticePasskeyAdded)
	})
	if err != nil {
		return nil, err
	}
	return pk, nil
}

// passkeyName is a passkey's name trimmed and checked; "" names it "Passkey".
func passkeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return "", err
	}
	if len([]rune(name)) > MaxPasskeyName {
		return "", gatehouse.InvalidField("name", "name must be at most %d characters", MaxPasskeyName)
	}
	if name == "" {
		name = "Passkey"
	}
	return name, nil
}

// passkeyUser reads the account userID with its passkeys.
func (s *Service) passkeyUser(ctx context.Context, userID string) (*passkeyUser, error) {
	u, err := s.store.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Errorf(gatehouse.KindUnauthorized, "account not found")
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	pks, err := s.store.ListPasskeys(ctx, userID)
	if err != nil {
		return nil, internal("list passkeys", err)
	}
	pu := &passkeyUser{u: u}
	for i := range pks {
		pu.creds = append(pu.creds, pks[i].credential())
		pu.ids = append(pu.ids, pks[i].ID)
	}
	return pu, nil
}

// ListPasskeys lists the caller's passkeys, oldest first.
func (s *Service) ListPasskeys(ctx context.Context, p *gatehouse.Principal) ([]Passkey, error) {
	pks, err := s.store.ListPasskeys(ctx, p.UserID)
	if err != nil {
		return nil, internal("list passkeys", err)
	}
	return pks, nil
}

// RenamePasskey renames one of the caller's passkeys (404 for another's).
func (s *Service) RenamePasskey(ctx context.Context, p *gatehouse.Principal, id, name string) (*Passkey, error) {
	if strings.TrimSpace(name) == "" {
		return nil, gatehouse.InvalidField("name", "name is required")
	}
	name, err := passkeyName(name)
	if err != nil {
		return nil, err
	}
	if !gatehouse.IsID(id) {
		return nil, errPasskeyNotFound
	}
	pk, err := s.store.RenamePasskey(ctx, p.UserID, id, name)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errPasskeyNotFound
	}
	if err != nil {
		return nil, internal("rename passkey", err)
	}
	return pk, nil
}

var errPasskeyNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "passkey not found")

// DeletePasskey removes one of the caller's passkeys (404 for another's).
func (s *Service) DeletePasskey(ctx context.Context, p *gatehouse.Principal, id string) error {
	if !gatehouse.IsID(id) {
		return errPasskeyNotFound
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if err := s.recentSession(ctx, tx, p, "remove a passkey"); err != nil {
			return err
		}
		if err := tx.DeletePasskey(ctx, p.UserID, id); errors.Is(err, gatehouse.ErrNotFound) {
			return errPasskeyNotFound
		} else if err != nil {
			return internal("delete passkey", err)
		}
		if err := s.endOtherSessions(ctx, tx, p); err != nil {
			return err
		}
		if err := s.auditPasskey(ctx, tx, p, "user.passkey_removed", id, nil); err != nil {
			return err
		}
		return s.notify(ctx, tx, p.UserID, NoticePasskeyGone)
	})
}

// auditPasskey writes a change to the caller's passkeys in the log of the
// workspace the caller acts in, as a password change is (the home
// workspace for a hosted page's browser, which acts in none).
func (s *Service) auditPasskey(ctx context.Context, tx Store, p *gatehouse.Principal, action, passkeyID string, meta map[string]any) error {
	orgID := p.OrgID
	if orgID == "" {
		u, err := tx.UserByID(ctx, p.UserID)
		if err != nil {
			return internal("find user", err)
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		orgID = oc.ID
	}
	if err := s.ws.Audit(ctx, tx, orgID, p.UserID, action, "passkey", passkeyID, meta); err != nil {
		return internal("audit", err)
	}
	return nil
}
