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
	ExpiresAt time.Time
}

// Full reports whether the principal holds a full (sign-in) session.
func (p *Principal) Full() bool { return p.Via != ViaAPIKey && p.Via != ViaOAuth }
