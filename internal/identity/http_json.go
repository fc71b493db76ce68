package identity

import (
	"github.com/gatehouse/gatehouse"

	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The JSON shapes of CONTRACT §3 that identity answers with. Timestamps
// are RFC 3339 in UTC.

// userJSON is the User shape.
type userJSON struct {
	ID            string `json:"id"`
	Email         string `json:"email"`
	Name          string `json:"name"`
	AvatarURL     string `json:"avatar_url"`
	EmailVerified bool   `json:"email_verified"`
	// Language is the person's preference for pages and mail, "" when
	// they follow their browser's (Accept-Language).
	Language  string `json:"language"`
	CreatedAt string `json:"created_at"`
}

func toUser(u *gatehouse.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Name: u.Name, AvatarURL: u.AvatarURL, EmailVerified: u.EmailVerified, Language: u.Language, CreatedAt: httpjson.Stamp(u.CreatedAt)}
}

// sessionJSON is a sign-in: the access and refresh tokens, the user and
// the workspace the access token acts in.
type sessionJSON struct {
	AccessToken  string                   `json:"access_token"`
	TokenType    string                   `json:"token_type"`
	ExpiresAt    string                   `json:"expires_at"`
	RefreshToken string                   `json:"refresh_token"`
	User         userJSON                 `json:"user"`
	Org          workspace.OrgContextJSON `json:"org"`
	// MFA is present only when the session owes its second factor.
	MFA *mfaJSON `json:"mfa,omitempty"`
}

// mfaJSON tells a client that a sign-in must take its second step
// (POST /v1/auth/mfa) with one of factors.
type mfaJSON struct {
	Required bool     `json:"required"`
	Factors  []string `json:"factors"`
}

func toSession(si *SignIn) sessionJSON {
	out := sessionJSON{AccessToken: si.AccessToken, TokenType: "Bearer", ExpiresAt: httpjson.Stamp(si.ExpiresAt),
		RefreshToken: si.RefreshToken, User: toUser(si.User), Org: workspace.ToOrgContext(si.Org)}
	if len(si.Factors) > 0 {
		out.MFA = &mfaJSON{Required: true, Factors: si.Factors}
	}
	return out
}

// orgListingJSON is a row of GET /v1/me/orgs.
type orgListingJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	AvatarURL   string `json:"avatar_url"`
	Kind        string `json:"kind"`
	CreatedAt   string `json:"created_at"`
	Role        string `json:"role"`
	MemberCount int    `json:"member_count"`
	IsDefault   bool   `json:"is_default"`
}

// toOrgListing is the row of o; def is the caller's default workspace.
func toOrgListing(o *workspace.OrgListing, def string) orgListingJSON {
	return orgListingJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL, Kind: o.Kind,
		CreatedAt: httpjson.Stamp(o.CreatedAt), Role: o.Role, MemberCount: o.MemberCount, IsDefault: o.ID == def}
}

// sessionRowJSON is a row of GET /v1/me/sessions.
type sessionRowJSON struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"created_at"`
	ExpiresAt  string `json:"expires_at"`
	LastUsedAt string `json:"last_used_at"`
	UserAgent  string `json:"user_agent"`
	IP         string `json:"ip"`
	Current    bool   `json:"current"`
}

// toSessionRow is the row of x; current is the caller's own session.
func toSessionRow(x *Session, current string) sessionRowJSON {
	return sessionRowJSON{ID: x.ID, CreatedAt: httpjson.Stamp(x.CreatedAt), ExpiresAt: httpjson.Stamp(x.ExpiresAt),
		LastUsedAt: httpjson.Stamp(x.LastUsedAt), UserAgent: x.UserAgent, IP: x.IP, Current: x.ID == current}
}

// grantJSON is a row of GET /v1/me/grants.
type grantJSON struct {
	ID         string `json:"id"`
	ClientID   string `json:"client_id"`
	ClientName string `json:"client_name"`
	OrgID      string `json:"org_id"`
	Scope      string `json:"scope"`
	CreatedAt  string `json:"created_at"`
}

func toGrant(g *Grant) grantJSON {
	return grantJSON{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, OrgID: g.OrgID, Scope: g.Scope, CreatedAt: httpjson.Stamp(g.CreatedAt)}
}
