package identity

import (
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Email token purposes.
const (
	PurposeMagicLink     = "magic_link"
	PurposeVerifyEmail   = "verify_email"
	PurposePasswordReset = "password_reset"
	PurposeChangeEmail   = "change_email"
	PurposeUndoEmail     = "undo_email_change"
)

// Session is a sign-in session: a chain of refresh tokens.
type Session struct {
	ID         string
	UserID     string
	Via        string
	GrantID    string
	OrgID      string
	UserAgent  string
	IP         string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time
	RevokedAt  *time.Time
	// Level is the session's assurance, which its refreshes keep.
	Level gatehouse.Assurance
	// RefreshHash is the hash of the first refresh token, stored with the
	// session by CreateSession (reads leave it empty).
	RefreshHash string
	// FirstPasskeyID is the passkey whose sign-in opened the session, which
	// the second factor it may owe cannot be (stored by CreateSession, read
	// by SessionFirstPasskey; other reads leave it empty).
	FirstPasskeyID string
}

// RefreshToken is one link of a session's chain, stored by hash: the
// session's live token, whose expiry is the session's, or one it rotated
// away. CreatedAt is set on a successor only (it is when the rotation
// happened).
type RefreshToken struct {
	Hash      string
	SessionID string
	CreatedAt time.Time
	ExpiresAt time.Time
	RotatedAt *time.Time
}

// RefreshRead is what a refresh reads before it writes, in one query: the
// token, its session, the session's user and the org the session is scoped
// to (its fixed org, else the user's default org) with the user's role
// there. Org is nil when there is no such org; Role is "" when the user is
// not a member of it.
type RefreshRead struct {
	Token   *RefreshToken
	Session *Session
	User    *gatehouse.User
	Org     *workspace.Org
	Role    string
}

// EmailToken is a single-use emailed secret, stored by hash.
type EmailToken struct {
	Hash      string
	Purpose   string
	Email     string
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// SignIn is the result of a sign-in flow: an access token, a refresh token,
// the user and the workspace the token is scoped to.
type SignIn struct {
	AccessToken  string
	ExpiresAt    time.Time
	RefreshToken string
	User         *gatehouse.User
	Org          *workspace.OrgContext
	// Factors, when not empty, are the second factors the session owes
	// (its level is aal1 and pending until the step).
	Factors []string
	// SessionID is the session the tokens belong to; GrantID its OAuth
	// grant ("" for a sign-in session). ID tokens name the session (sid).
	SessionID string
	GrantID   string
	// Scope is the scope of an OAuth session's access token (the token
	// endpoint's scope; the grant's unless a refresh narrowed it); ""
	// when none was asked for.
	Scope string
}

// Grant is a connected OAuth app: a user's consent for a client to act in
// one workspace.
type Grant struct {
	ID         string
	UserID     string
	ClientID   string
	ClientName string
	OrgID      string
	Scope      string
	Resource   string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// AAL is the level of the session that approved the grant (aal1 for
	// grants made before it was recorded); its sessions keep it.
	AAL string
	// SessionID is the sign-in session that approved the grant on the
	// consent page ("" for a device approval): signing it out sends the
	// client a back-channel logout for the grant's sessions.
	SessionID string
}

// Factor kinds: what the second-factor step accepts.
const (
	FactorTOTP         = "totp"
	FactorRecoveryCode = "recovery_code"
	// FactorPasskey is a passkey of the account, usable as the second
	// factor once the account has a TOTP factor (a passkey alone does not
	// turn two-factor on: it signs in by itself).
	FactorPasskey = "passkey"
)

// Step is what the second-factor step presents: a TOTP or recovery code
// (Code), or a passkey's assertion (CeremonyID of BeginPasskeyStep and
// the browser's Credential).
type Step struct {
	Method     string          `json:"method"`
	Code       string          `json:"code"`
	CeremonyID string          `json:"ceremony_id"`
	Credential json.RawMessage `json:"credential"`
}

// Factor is a second factor of an account: a TOTP secret today, sealed.
type Factor struct {
	ID          string
	UserID      string
	Kind        string
	Secret      string // sealed (seal.Box "totp", bound to ID), base64
	LastStep    int64  // the last TOTP time step accepted
	CreatedAt   time.Time
	ConfirmedAt *time.Time
}
