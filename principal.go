package gatehouse

import "time"

// How an access token was obtained (the `via` claim).
const (
	ViaPassword  = "password"
	ViaMagicLink = "magic_link"
	ViaRefresh   = "refresh"
	ViaAPIKey    = "api_key"
	ViaOAuth     = "oauth"
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
}

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
