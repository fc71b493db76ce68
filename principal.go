package gatehouse

import "time"

// How an access token was obtained (the `via` claim).
const (
	ViaPassword  = "password"
	ViaMagicLink = "magic_link"
	ViaRefresh   = "refresh"
	ViaAPIKey    = "api_key"
	ViaOAuth     = "oauth"
	ViaPasskey   = "passkey"
	// ViaSSO is a sign-in proven by a workspace's identity provider
	// (internal/sso).
	ViaSSO = "sso"
	// ViaSocial is a sign-in proven by one of the instance's upstream
	// OpenID providers (social sign-in, internal/sso).
	ViaSocial = "social"
)

// Principal is the verified caller of a bearer request.
type Principal struct {
	UserID    string
	SessionID string
	OrgID     string
	Role      string
	Tools     []string
	Via       string
	TokenID   string
	KeyID     string // the API key behind a key token
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Resources are the RFC 8707 resources the token is bound to (its
	// audience beside "gatehouse"); none for a token requested without
	// one, which every API accepts.
	Resources []string
	// Scope is the scope granted to an OAuth token (space-separated);
	// with a tool scope in it the token may do on the tool APIs only what
	// its scopes allow (ScopeAllows).
	Scope string
	Assurance
}

// Assurance levels (the `aal` claim) and the RFC 8176 methods (`amr`) a
// token names, with Gatehouse's own magic_link, api_key and oauth.
const (
	AAL1 = "aal1"
	AAL2 = "aal2"

	AMRPassword = "pwd"
	AMROTP      = "otp"
	AMRMFA      = "mfa"
	// AMRHardwareKey and AMRSoftwareKey are a passkey bound to one
	// device's hardware and one that may be synced (RFC 8176 hwk, swk).
	AMRHardwareKey = "hwk"
	AMRSoftwareKey = "swk"
	AMRMagicLink   = "magic_link"
	AMRAPIKey      = "api_key"
	AMROAuth       = "oauth"
	// AMRSSO is a sign-in proven by a workspace's identity provider.
	AMRSSO = "sso"
	// AMRSocial is a sign-in proven by an instance's upstream provider.
	AMRSocial = "social"
)

// Assurance is how strongly a sign-in was authenticated: its level, the
// methods presented, and whether a second factor is still owed (a session
// of an account with a factor, before the second step).
type Assurance struct {
	AAL     string
	AMR     []string
	Pending bool
}

// ErrSecondFactor answers every route but the second-factor step, the
// caller's own description and logout while a second factor is owed.
var ErrSecondFactor = Errorf(KindForbidden, "two-factor authentication required")

// Full reports whether the principal holds a full (sign-in) session.
func (p *Principal) Full() bool { return p.Via != ViaAPIKey && p.Via != ViaOAuth }

// RequireFull returns nil when the principal holds a full sign-in
// session, and otherwise the answer a key or OAuth token gets for an
// operation that needs one: it reaches only its own workspace, so an
// operation on another (orgID set and not its own) reads as not found,
// and any other as forbidden.
func (p *Principal) RequireFull(orgID string) error {
	if p.Full() {
		return nil
	}
	if orgID != "" && orgID != p.OrgID {
		return Errorf(KindNotFound, "organization not found")
	}
	return Errorf(KindForbidden, "this operation needs a full sign-in session, not an API-key or OAuth token")
}

// SessionMeta describes the client that opens a session: what the session
// records and the lockout keys on.
type SessionMeta struct {
	UserAgent string
	IP        string
}

// Level returns a with its blanks filled for a sign-in obtained by via: a
// level of aal1 and the one method via names (a password, a link, a key,
// an OAuth grant).
func (a Assurance) Level(via string) Assurance {
	if a.AAL == "" {
		a.AAL = AAL1
	}
	if len(a.AMR) == 0 {
		switch via {
		case ViaPassword:
			a.AMR = []string{AMRPassword}
		case ViaMagicLink:
			a.AMR = []string{AMRMagicLink}
		case ViaAPIKey:
			a.AMR = []string{AMRAPIKey}
		case ViaOAuth:
			a.AMR = []string{AMROAuth}
		case ViaSSO:
			a.AMR = []string{AMRSSO}
		case ViaSocial:
			a.AMR = []string{AMRSocial}
		}
	}
	return a
}
