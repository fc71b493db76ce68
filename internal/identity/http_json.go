package identity

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
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
	CreatedAt     string `json:"created_at"`
}

func toUser(u *accounts.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Name: u.Name, AvatarURL: u.AvatarURL, EmailVerified: u.EmailVerified, CreatedAt: httpjson.Stamp(u.CreatedAt)}
}

// orgContextJSON is the workspace an access token acts in, with the
// caller's role and the tools it may use there.
type orgContextJSON struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Slug  string   `json:"slug"`
	Kind  string   `json:"kind"`
	Role  string   `json:"role"`
	Tools []string `json:"tools"`
}

func toOrgContext(o *accounts.OrgContext) orgContextJSON {
	tools := o.Tools
	if tools == nil {
		tools = []string{}
	}
	return orgContextJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: o.Role, Tools: tools}
}

// sessionJSON is a sign-in: the access and refresh tokens, the user and
// the workspace the access token acts in.
type sessionJSON struct {
	AccessToken  string         `json:"access_token"`
	TokenType    string         `json:"token_type"`
	ExpiresAt    string         `json:"expires_at"`
	RefreshToken string         `json:"refresh_token"`
	User         userJSON       `json:"user"`
	Org          orgContextJSON `json:"org"`
}

func toSession(si *accounts.SignIn) sessionJSON {
	return sessionJSON{AccessToken: si.AccessToken, TokenType: "Bearer", ExpiresAt: httpjson.Stamp(si.ExpiresAt),
		RefreshToken: si.RefreshToken, User: toUser(si.User), Org: toOrgContext(si.Org)}
}

// OrgTokenJSON is an access token for one workspace without a refresh
// token (switch-org, key exchange, and workspace's invitation accept and
// discovery join).
type OrgTokenJSON struct {
	AccessToken string         `json:"access_token"`
	TokenType   string         `json:"token_type"`
	ExpiresAt   string         `json:"expires_at"`
	Org         orgContextJSON `json:"org"`
}

// ToOrgToken is the JSON shape of t.
func ToOrgToken(t *accounts.OrgToken) OrgTokenJSON {
	return OrgTokenJSON{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresAt: httpjson.Stamp(t.ExpiresAt), Org: toOrgContext(t.Org)}
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
func toOrgListing(o *accounts.OrgListing, def string) orgListingJSON {
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
func toSessionRow(x *accounts.Session, current string) sessionRowJSON {
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

func toGrant(g *accounts.Grant) grantJSON {
	return grantJSON{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, OrgID: g.OrgID, Scope: g.Scope, CreatedAt: httpjson.Stamp(g.CreatedAt)}
}

// apiKeyJSON is an API key, personal or a workspace's; the secret only
// right after creation.
type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	OrgID      string   `json:"org_id"`
	Role       string   `json:"role,omitempty"`
	Tools      []string `json:"tools"`
	Prefix     string   `json:"prefix"`
	ExpiresAt  *string  `json:"expires_at"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	Secret     string   `json:"secret,omitempty"`
}

func toAPIKey(k *accounts.APIKey) apiKeyJSON {
	tools := k.Tools
	if tools == nil {
		tools = []string{}
	}
	role := k.Role
	if k.Kind == accounts.KeyUser {
		role = ""
	}
	return apiKeyJSON{ID: k.ID, Name: k.Name, Kind: k.Kind, OrgID: k.OrgID, Role: role, Tools: tools, Prefix: k.Prefix,
		ExpiresAt: httpjson.StampPtr(k.ExpiresAt), CreatedAt: httpjson.Stamp(k.CreatedAt), LastUsedAt: httpjson.StampPtr(k.LastUsedAt)}
}

// WriteKeys answers a list of API keys (no secrets): the personal keys
// here, a workspace's keys in workspace.
func WriteKeys(w http.ResponseWriter, ks []accounts.APIKey) {
	out := make([]apiKeyJSON, len(ks))
	for i := range ks {
		out[i] = toAPIKey(&ks[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"api_keys": out})
}
