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

	CreateSession(ctx context.Context, s *Session) error
	SessionByID(ctx context.Context, id string) (*Session, error)
	// RevokeSession revokes a live session; false when it was already revoked.
	RevokeSession(ctx context.Context, id string, at time.Time) (bool, error)
	InsertRefreshToken(ctx context.Context, t *RefreshToken) error
	// RotateRefresh is the write of a refresh, all or nothing: the live
	// session records its use and slides its expiry to next.ExpiresAt, the
	// unrotated, unexpired token hash of that session is marked rotated at
	// next.CreatedAt, and next is stored. ErrNotFound, with nothing rotated
	// or stored, when the session is revoked or gone or the token is
	// rotated, expired or gone. Of two concurrent callers exactly one wins.
	RotateRefresh(ctx context.Context, hash string, next *RefreshToken) error
	RefreshTokenByHash(ctx context.Context, hash string) (*RefreshToken, error)
	// RefreshSession reads a refresh token with its session, user and org
	// in one query; ErrNotFound when no such token exists.
	RefreshSession(ctx context.Context, hash string) (*RefreshRead, error)
	// RefreshOnce checks and rotates the refresh token of a sign-in
	// session (not a grant's) in one round trip when the store can: the
	// token live and unrotated, the session live and younger than maxAge;
	// next is stored as its successor, ending with the session
	// (min(next.ExpiresAt, created + maxAge), written back into next). It
	// returns the read of RefreshSession as it was before the rotation but
	// with the new session expiry, and ok false when it rotated nothing or
	// cannot (the caller then takes RefreshSession and RotateRefresh).
	RefreshOnce(ctx context.Context, hash string, next *RefreshToken, maxAge time.Duration) (read *RefreshRead, ok bool, err error)

	CreateEmailToken(ctx context.Context, t *EmailToken) error
	// UseEmailToken marks an unused, unexpired token of the purpose used and
	// returns it; ErrNotFound when no such token exists.
	UseEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*EmailToken, error)
	// LatestEmailToken returns the newest token of purpose sent to the user.
	LatestEmailToken(ctx context.Context, userID, purpose string) (*EmailToken, error)
	// PeekEmailToken returns an unused token of the purpose unexpired at
	// at, without using it; ErrNotFound when there is none.
	PeekEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*EmailToken, error)
	// SpendEmailTokens marks every unused, unexpired token of the purpose
	// sent to the user used at at.
	SpendEmailTokens(ctx context.Context, userID, purpose string, at time.Time) error

	// UserOrgs lists the live orgs the user belongs to, by join date.
	UserOrgs(ctx context.Context, userID string) ([]workspace.OrgListing, error)
	DeleteUser(ctx context.Context, userID string, at time.Time) error

	// ListSessions lists the user's live sign-in sessions, newest first.
	ListSessions(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// RevokeUserSessions revokes the user's live sessions except keep.
	RevokeUserSessions(ctx context.Context, userID, keep string, at time.Time) error

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
	// DisableUserWebhooks turns off every active webhook the user created,
	// in any workspace, and returns how many.
	DisableUserWebhooks(ctx context.Context, userID string, at time.Time) (int, error)
	// TouchAPIKey sets last_used_at to at unless it is already after staleBefore.
	TouchAPIKey(ctx context.Context, id string, at, staleBefore time.Time) error
}
