package web

import (
	"github.com/gatehouse/gatehouse/internal/accounts"
)

// The JSON shapes of CONTRACT §3. Timestamps are RFC 3339 in UTC.

type userJSON struct {
	ID            string `json:"id"`
	Email         string `json:"email"`
	Name          string `json:"name"`
	AvatarURL     string `json:"avatar_url"`
	EmailVerified bool   `json:"email_verified"`
	CreatedAt     string `json:"created_at"`
}

func toUser(u *accounts.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Name: u.Name, AvatarURL: u.AvatarURL, EmailVerified: u.EmailVerified, CreatedAt: stamp(u.CreatedAt)}
}

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

type sessionJSON struct {
	AccessToken  string         `json:"access_token"`
	TokenType    string         `json:"token_type"`
	ExpiresAt    string         `json:"expires_at"`
	RefreshToken string         `json:"refresh_token"`
	User         userJSON       `json:"user"`
	Org          orgContextJSON `json:"org"`
}

func toSession(si *accounts.SignIn) sessionJSON {
	return sessionJSON{AccessToken: si.AccessToken, TokenType: "Bearer", ExpiresAt: stamp(si.ExpiresAt),
		RefreshToken: si.RefreshToken, User: toUser(si.User), Org: toOrgContext(si.Org)}
}

type orgTokenJSON struct {
	AccessToken string         `json:"access_token"`
	TokenType   string         `json:"token_type"`
	ExpiresAt   string         `json:"expires_at"`
	Org         orgContextJSON `json:"org"`
}

func toOrgToken(t *accounts.OrgToken) orgTokenJSON {
	return orgTokenJSON{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresAt: stamp(t.ExpiresAt), Org: toOrgContext(t.Org)}
}
