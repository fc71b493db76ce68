// Package scim is the SCIM 2.0 service provider (RFC 7643, RFC 7644) of a
// workspace: its SCIM tokens (/v1/orgs/{id}/scim-tokens), and the protocol
// at /scim/v2 that a directory (Okta, Microsoft Entra) drives to keep the
// workspace's members in step. It sits above identity and workspace, as
// internal/oauth does: it provisions accounts and memberships through their
// tables and rules, and workspace learns nothing of it.
package scim

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// TokenPrefix begins every SCIM token's secret.
const TokenPrefix = "scim_"

// Token is a workspace's SCIM bearer token; its secret is kept only as
// Hash.
type Token struct {
	ID        string
	OrgID     string
	Name      string
	Prefix    string // the secret's first characters, for display
	Hash      string
	CreatedBy string
	CreatedAt time.Time
}

// DirUser is a directory user of a workspace: what the directory sent,
// keyed by UserName (an email address) and ExternalID, and the account it
// stands for (UserID, "" while pending).
type DirUser struct {
	ID          string
	OrgID       string
	UserName    string
	UserNameKey string // gatehouse.ParseEmail's key of UserName
	ExternalID  string
	DisplayName string
	Active      bool
	UserID      string
	// Resource holds the resource's other attributes (name, emails, the
	// enterprise extension...), as the directory sent them.
	Resource  map[string]any
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Group is a SCIM group: a managed team of the workspace (its id is the
// team's) and the directory's externalId.
type Group struct {
	TeamID      string
	OrgID       string
	DisplayName string // the team's name
	ExternalID  string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Lookup selects directory users in the store: by UserNameKey or by
// ExternalID when set, else all of the workspace's, oldest first.
type Lookup struct {
	UserNameKey string
	ExternalID  string
}

// Store is what SCIM reads and writes: its own tables, and the workspace's
// and the few account rows it provisions, in one transaction (Tx).
type Store interface {
	Tx(ctx context.Context, fn func(tx Store) error) error
	workspace.Tables
	// CreateUser creates an account; ErrConflict: the address is taken.
	CreateUser(ctx context.Context, u *gatehouse.User) error
	// UserByEmail finds the account of address key (ParseEmail's key).
	UserByEmail(ctx context.Context, key string) (*gatehouse.User, error)

	CreateToken(ctx context.Context, t *Token) error
	// Tokens lists the org's live tokens, newest first.
	Tokens(ctx context.Context, orgID string) ([]Token, error)
	// DeleteToken marks a live token of the org deleted; ErrNotFound otherwise.
	DeleteToken(ctx context.Context, orgID, id string, at time.Time) error
	// TokenByHash is the live token of hash in a live team org; ErrNotFound otherwise.
	TokenByHash(ctx context.Context, hash string) (*Token, error)

	// CreateDirUser inserts u; ErrConflict: the workspace has its userName.
	CreateDirUser(ctx context.Context, u *DirUser) error
	// DirUser is the org's directory user id; ErrNotFound.
	DirUser(ctx context.Context, orgID, id string) (*DirUser, error)
	// UpdateDirUser writes every field but org and creation; ErrConflict:
	// userName taken; ErrNotFound.
	UpdateDirUser(ctx context.Context, u *DirUser) error
	DeleteDirUser(ctx context.Context, orgID, id string) error
	DirUsers(ctx context.Context, orgID string, by Lookup) ([]DirUser, error)
	// CreateGroup records the directory's side of managed team g.TeamID.
	CreateGroup(ctx context.Context, g *Group) error
	// Group is the org's live group of team id with its team's name; ErrNotFound.
	Group(ctx context.Context, orgID, teamID string) (*Group, error)
	// Groups lists the org's live groups, oldest first.
	Groups(ctx context.Context, orgID string) ([]Group, error)
	UpdateGroup(ctx context.Context, g *Group) error
	DeleteGroup(ctx context.Context, teamID string) error
	// GroupMembers lists the directory users in group teamID.
	GroupMembers(ctx context.Context, teamID string) ([]DirUser, error)
	AddGroupMember(ctx context.Context, teamID, dirUserID string) error
	RemoveGroupMember(ctx context.Context, teamID, dirUserID string) error
	// Settings is the org's saved settings; ErrNotFound when none.
	Settings(ctx context.Context, orgID string) (*Settings, error)
	// SetSettings saves s, replacing the org's earlier settings.
	SetSettings(ctx context.Context, s *Settings) error
	// RevokeMemberKeys revokes the API keys userID created in org (its
	// personal keys bound there and the org keys it made); how many.
	RevokeMemberKeys(ctx context.Context, orgID, userID string, at time.Time) (int, error)
}

// Config wires a Service.
type Config struct {
	Store     Store
	Workspace *workspace.Service
	// BaseURL is the service's base URL; the SCIM base is BaseURL/scim/v2.
	BaseURL string
	Logger  *slog.Logger
	Now     func() time.Time // nil: time.Now
	// RecentAuth checks that the caller signed in recently (identity's
	// RequireRecentAuth), before a token is created; nil: no check.
	RecentAuth func(ctx context.Context, p *gatehouse.Principal, action string) error
}

// Service carries out SCIM tokens and provisioning.
type Service struct {
	store      Store
	ws         *workspace.Service
	base       string
	log        *slog.Logger
	now        func() time.Time
	recentAuth func(ctx context.Context, p *gatehouse.Principal, action string) error
}

// New returns a Service.
func New(c Config) *Service {
	s := &Service{store: c.Store, ws: c.Workspace, base: trimSlash(c.BaseURL) + "/scim/v2", log: c.Logger, now: c.Now, recentAuth: c.RecentAuth}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// BaseURL is the SCIM base URL a directory is given.
func (s *Service) BaseURL() string { return s.base }

// Now is the service clock's current time.
func (s *Service) Now() time.Time { return s.now().UTC() }

func trimSlash(u string) string {
	for len(u) > 0 && u[len(u)-1] == '/' {
		u = u[:len(u)-1]
	}
	return u
}

// actor is the audit actor of a change made with token id.
func actor(tokenID string) string { return "scim:" + tokenID }
