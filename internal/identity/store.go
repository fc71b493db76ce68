package identity

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Store persists people, credentials and sessions. Rules live in Service;
// the store reads, writes and translates driver errors into ErrNotFound and
// ErrConflict. It holds workspace's tables too, so that one transaction
// (Tx) serves both: registration creates the personal org, a proof of the
// mailbox joins orgs, and so on, atomically.
type Store interface {
	// Tx runs fn in a read-write transaction and commits when fn returns nil.
	Tx(ctx context.Context, fn func(tx Store) error) error
	workspace.Tables

	Ping(ctx context.Context) error
	// SettingOrCreate returns the setting key, storing value first if absent;
	// concurrent callers all get the one value that won.
	SettingOrCreate(ctx context.Context, key, value string) (string, error)

	CreateUser(ctx context.Context, u *gatehouse.User) error // ErrConflict: email key taken
	// UserByEmail finds the account whose EmailKey is key (see ParseEmail).
	UserByEmail(ctx context.Context, key string) (*gatehouse.User, error)
	UpdateUser(ctx context.Context, u *gatehouse.User) error
	// ReplacePasswordHash sets the hash only if it is still old; ErrNotFound
	// otherwise, so of two concurrent changes with one password only one wins.
	ReplacePasswordHash(ctx context.Context, userID, old, hash string) error
	// PinUser reads the user and keeps the row from being deleted until the
	// transaction ends (rows that reference it can then be inserted).
	PinUser(ctx context.Context, userID string) (*gatehouse.User, error)
	// SetUserDisabled sets or (at nil) clears the account's disabled_at.
	SetUserDisabled(ctx context.Context, userID string, at *time.Time) error

	CreateSession(ctx context.Context, s *Session) error
	SessionByID(ctx context.Context, id string) (*Session, error)
	// RevokeSession revokes a live session; false when it was already revoked.
	RevokeSession(ctx context.Context, id string, at time.Time) (bool, error)
	// A session holds the hash of its one live refresh token (set by
	// CreateSession from Session.RefreshHash); the hashes it rotated away
	// are kept, with when, until they expire. Reads name the session (the
	// token's text does, see RefreshSessionOf for older tokens) and the
	// token's hash.

	// RotateRefresh is the write of a refresh, all or nothing: the live
	// session next.SessionID, while hash is its live token and unexpired,
	// records its use, slides its expiry to next.ExpiresAt and takes
	// next.Hash as its live token; hash is kept as rotated at
	// next.CreatedAt. ErrNotFound, with nothing changed, when the session
	// is revoked, expired or gone or hash is not its live token. Of two
	// concurrent callers exactly one wins.
	RotateRefresh(ctx context.Context, hash string, next *RefreshToken) error
	// RefreshToken reads the token hashed hash of session sid: its live
	// one, or one it rotated away; ErrNotFound when it is neither.
	RefreshToken(ctx context.Context, sid, hash string) (*RefreshToken, error)
	// RefreshSessionOf is the session of a token whose text names none
	// (issued before tokens did): the history holds it. ErrNotFound when
	// the hash is unknown.
	RefreshSessionOf(ctx context.Context, hash string) (string, error)
	// RefreshSession reads a refresh token (as RefreshToken) with its
	// session, user and org in one query; ErrNotFound when no such token
	// exists.
	RefreshSession(ctx context.Context, sid, hash string) (*RefreshRead, error)
	// BrowserRead reads session sid with its user in one query when hash
	// is its live refresh token (no org: a page view needs none);
	// ErrNotFound otherwise, a rotated token included.
	BrowserRead(ctx context.Context, sid, hash string) (*RefreshRead, error)
	// RefreshOnce checks and rotates the refresh token of a sign-in
	// session (not a grant's) in one round trip when the store can: hash
	// the live token of session sid, the session refreshable at
	// next.CreatedAt under p (p.Refreshable); next becomes its live
	// token, ending with the session at p.End(created, next.CreatedAt),
	// written back into next. The store takes its numbers from p, as
	// parameters. It returns the read of RefreshSession as it was before
	// the rotation but with the new session expiry, and ok false when it
	// rotated nothing or cannot (the caller then takes RefreshSession and
	// RotateRefresh).
	RefreshOnce(ctx context.Context, sid, hash string, next *RefreshToken, p SessionPolicy) (read *RefreshRead, ok bool, err error)

	// SetUserEmail changes the user's address and its key (see ParseEmail)
	// and sets its verification flag; ErrNotFound when another account
	// holds the key (or the user is gone).
	SetUserEmail(ctx context.Context, userID, email, key string, verified bool, at time.Time) error
	CreateEmailToken(ctx context.Context, t *EmailToken) error
	// UseEmailToken marks an unused, unexpired token of the purpose used and
	// returns it; ErrNotFound when no such token exists.
	UseEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*EmailToken, error)
	// LatestEmailToken returns the newest token of purpose sent to the user.
	LatestEmailToken(ctx context.Context, userID, purpose string) (*EmailToken, error)
	// PeekEmailToken returns an unused token of the purpose unexpired at
	// at, without using it; ErrNotFound when there is none.
	PeekEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*EmailToken, error)
	// EmailTokenAny returns the token of the purpose, used or expired
	// alike (UsedAt set when used); ErrNotFound when there is none.
	EmailTokenAny(ctx context.Context, hash, purpose string) (*EmailToken, error)
	// SpendEmailTokens marks every unused, unexpired token of the purpose
	// sent to the user used at at.
	SpendEmailTokens(ctx context.Context, userID, purpose string, at time.Time) error

	// UserOrgs lists the live orgs the user belongs to, by join date.
	UserOrgs(ctx context.Context, userID string) ([]workspace.OrgListing, error)
	// UserOrg is the user's listing of one live org; ErrNotFound when they
	// are not its member.
	UserOrg(ctx context.Context, userID, orgID string) (*workspace.OrgListing, error)
	DeleteUser(ctx context.Context, userID string, at time.Time) error

	// ListSessions lists the user's live sign-in sessions, newest first.
	ListSessions(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// RevokeUserSessions revokes the user's live sessions except keep.
	RevokeUserSessions(ctx context.Context, userID, keep string, at time.Time) error
	// RevokeTokensIssuedBefore refuses, on every instance, the unexpired
	// tokens no session names that the user's keys (personal, and the org
	// keys the user created) were exchanged for up to at; later ones work.
	RevokeTokensIssuedBefore(ctx context.Context, userID string, at time.Time) error

	ListGrants(ctx context.Context, userID string) ([]Grant, error)
	CreateGrant(ctx context.Context, g *Grant) error
	// GrantByID returns a grant, revoked or not; inside a transaction it
	// also locks the row, so a concurrent revocation waits for the session
	// issued under it (or the issue sees the revocation).
	GrantByID(ctx context.Context, id string) (*Grant, error)
	// RevokeGrant revokes a live grant of the user and its sessions;
	// ErrNotFound when there is none.
	RevokeGrant(ctx context.Context, userID, grantID string, at time.Time) error
	// RevokeUserGrants revokes every live grant of the user (not their
	// sessions: RevokeUserSessions does) and returns how many.
	RevokeUserGrants(ctx context.Context, userID string, at time.Time) (int, error)

	APIKeyByHash(ctx context.Context, hash string) (*workspace.APIKey, error)
	// RevokeUserKeys revokes every live key acting as the user or created
	// by them (org keys) and returns how many.
	RevokeUserKeys(ctx context.Context, userID string, at time.Time) (int, error)
	// RevokePersonalKeys revokes every live personal key of the user (not
	// the workspace keys they created) and returns how many.
	RevokePersonalKeys(ctx context.Context, userID string, at time.Time) (int, error)
	// DisableUserWebhooks turns off every active webhook the user created,
	// in any workspace, and returns how many.
	DisableUserWebhooks(ctx context.Context, userID string, at time.Time) (int, error)
	// TouchAPIKey sets last_used_at to at unless it is already after staleBefore.
	TouchAPIKey(ctx context.Context, id string, at, staleBefore time.Time) error

	// CreatePasskey stores a passkey; ErrConflict when its credential id is
	// registered already (to any account).
	CreatePasskey(ctx context.Context, pk *Passkey) error
	// ListPasskeys lists the user's passkeys, oldest first.
	ListPasskeys(ctx context.Context, userID string) ([]Passkey, error)
	// PasskeyByCredentialID finds the passkey of a credential id.
	PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*Passkey, error)
	// PasskeyOwner finds the passkey of a credential id, its account and
	// the account's default workspace in one read; ErrNotFound when the
	// passkey or the account is missing.
	PasskeyOwner(ctx context.Context, credentialID []byte) (*PasskeyAccount, error)
	// RenamePasskey renames the user's passkey id; ErrNotFound when the
	// user has no such passkey.
	RenamePasskey(ctx context.Context, userID, id, name string) (*Passkey, error)
	// DeletePasskey deletes the user's passkey id; ErrNotFound when the
	// user has no such passkey.
	DeletePasskey(ctx context.Context, userID, id string) error
	// DeleteUserPasskeys deletes every passkey of the user and returns how
	// many.
	DeleteUserPasskeys(ctx context.Context, userID string) (int, error)
	// DeleteUserCeremonies deletes every begun ceremony for the user (a
	// registration, or a second-factor check) and returns how many.
	DeleteUserCeremonies(ctx context.Context, userID string) (int, error)
	// SessionFirstPasskey is the passkey whose sign-in opened session id
	// (Session.FirstPasskeyID), "" when none did; ErrNotFound when there is
	// no such session.
	SessionFirstPasskey(ctx context.Context, sessionID string) (string, error)
	// UsePasskey records an assertion: sign count, flags and last use, only
	// while the stored count is below count or both are 0; ErrNotFound
	// otherwise (the passkey is gone or another assertion counted first).
	UsePasskey(ctx context.Context, id string, count uint32, verified, backedUp bool, at time.Time) error
	// CreateCeremony stores a begun WebAuthn ceremony.
	CreateCeremony(ctx context.Context, c *Ceremony) error
	// TakeCeremony deletes and returns the ceremony of the hash and kind
	// unexpired at at; ErrNotFound when there is none. Of concurrent
	// callers one at most gets it.
	TakeCeremony(ctx context.Context, idHash, kind string, at time.Time) (*Ceremony, error)
	// UseCeremony deletes the ceremony of the hash and kind unexpired at
	// at, as TakeCeremony does, without reading it back; when session is
	// not nil only a ceremony of no account holding exactly that session.
	// ErrNotFound when none was deleted.
	UseCeremony(ctx context.Context, idHash, kind string, at time.Time, session []byte) error
	// PeekCeremony returns the ceremony of the hash and kind unexpired at
	// at without using it; ErrNotFound when there is none.
	PeekCeremony(ctx context.Context, idHash, kind string, at time.Time) (*Ceremony, error)
	// PurgeCeremonies deletes the ceremonies expired at at.
	PurgeCeremonies(ctx context.Context, at time.Time) error
	// SetSessionLevel sets the assurance of a live session (a first factor
	// confirmed raises the session that confirmed it); ErrNotFound otherwise.
	SetSessionLevel(ctx context.Context, id string, lvl gatehouse.Assurance) error

	// UserFactors lists what the user can present as a second factor:
	// each kind of confirmed factor ("totp"), then "recovery_code" while
	// an unused code is left; empty when the account has no factor.
	UserFactors(ctx context.Context, userID string) ([]string, error)
	CreateFactor(ctx context.Context, f *Factor) error
	// FactorByID returns the user's factor id; ErrNotFound otherwise.
	FactorByID(ctx context.Context, userID, id string) (*Factor, error)
	// ConfirmedFactor returns the user's confirmed factor of kind.
	ConfirmedFactor(ctx context.Context, userID, kind string) (*Factor, error)
	// ListFactors lists the user's factors, oldest first.
	ListFactors(ctx context.Context, userID string) ([]Factor, error)
	// UseFactorStep records step as the factor's last accepted time step
	// only if it is greater than the one stored, and confirms the factor
	// at confirm when not nil (only if unconfirmed); ErrNotFound when the
	// condition fails, so of two uses of one code exactly one wins.
	UseFactorStep(ctx context.Context, id string, step int64, confirm *time.Time) error
	// DeleteFactor deletes the user's factor; ErrNotFound when there is none.
	DeleteFactor(ctx context.Context, userID, id string) error
	// DeleteUnconfirmedFactors deletes the user's factors never confirmed.
	DeleteUnconfirmedFactors(ctx context.Context, userID string) error
	// DeleteUserFactors deletes every factor of the user, confirmed or
	// not, and returns how many.
	DeleteUserFactors(ctx context.Context, userID string) (int, error)
	// DeleteUserIdentities unlinks every upstream identity (social
	// sign-in, SSO) of the user; it returns how many.
	DeleteUserIdentities(ctx context.Context, userID string) (int, error)

	// DeleteRecoveryCodes deletes the user's recovery codes, used or not,
	// and returns how many.
	DeleteRecoveryCodes(ctx context.Context, userID string) (int, error)
	// ReplaceRecoveryCodes deletes the user's recovery codes and stores hashes.
	ReplaceRecoveryCodes(ctx context.Context, userID string, hashes []string, at time.Time) error
	// UseRecoveryCode marks the user's unused code hash used; ErrNotFound
	// when there is none, so of concurrent uses of one code one wins.
	UseRecoveryCode(ctx context.Context, userID, hash string, at time.Time) error
	// RecoveryCodesLeft counts the user's unused recovery codes.
	RecoveryCodesLeft(ctx context.Context, userID string) (int, error)

	// MFAAttempt counts one second-factor attempt of the user at at, in a
	// window that restarts when its start is not after since, and returns
	// the attempts in the window and its start.
	MFAAttempt(ctx context.Context, userID string, at, since time.Time) (int, time.Time, error)
	// ClearMFAAttempts forgets the user's attempts (after a success).
	ClearMFAAttempts(ctx context.Context, userID string) error

	// PersonActivity returns up to limit entries of actions whose actor or
	// target is userID, in any workspace, newest first, before the entry
	// (at, id) when at is not zero.
	PersonActivity(ctx context.Context, userID string, actions []string, at time.Time, id string, limit int) ([]gatehouse.AuditEntry, error)
}
