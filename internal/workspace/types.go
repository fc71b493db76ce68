package workspace

import "time"

// Tools lists the seven tools in canonical order (CONTRACT §4).
var Tools = []string{"tasks", "notes", "sign", "links", "forms", "croncrunch", "crm"}

// IsTool reports whether name is one of the seven tools.
func IsTool(name string) bool {
	for _, t := range Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Org kinds.
const (
	OrgPersonal = "personal"
	OrgTeam     = "team"
)

// Org roles.
const (
	RoleOwner   = "owner"
	RoleAdmin   = "admin"
	RoleBilling = "billing"
	RoleMember  = "member"
)

// Org is a workspace, personal or team.
type Org struct {
	ID        string
	Name      string
	Slug      string
	AvatarURL string
	Kind      string
	OwnerID   string // the user of a personal org
	CreatedAt time.Time
	DeletedAt *time.Time
	// RequireMFA: members reach the org only with a second factor.
	RequireMFA bool
	// ToolStates are the tools whose state was set, when read with the
	// org (Store.OrgRole); nil when not read.
	ToolStates map[string]bool
}

// Membership is a user's role in an org.
type Membership struct {
	OrgID    string
	UserID   string
	Role     string
	JoinedAt time.Time
}

// OrgContext is the workspace a token is scoped to, with the caller's role
// and the tools enabled there.
type OrgContext struct {
	ID    string
	Name  string
	Slug  string
	Kind  string
	Role  string
	Tools []string
	// RequireMFA is the org's policy: no token below aal2 is minted for it.
	RequireMFA bool
}

// OrgToken is a freshly minted org-scoped access token without a refresh token.
type OrgToken struct {
	AccessToken string
	ExpiresAt   time.Time
	Org         *OrgContext
}

// OrgListing is a row of the caller's workspace list.
type OrgListing struct {
	Org
	Role        string
	MemberCount int
}

// API key kinds.
const (
	KeyUser = "user"
	KeyOrg  = "org"
)

// APIKey is a user key (svc_u_) or an org service-account key (svc_o_),
// stored by hash.
type APIKey struct {
	ID         string
	Kind       string
	UserID     string // user keys
	OrgID      string
	Name       string
	Role       string // org keys
	Tools      []string
	Prefix     string
	Hash       string
	CreatedBy  string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// AAL is the level of the session that made the key (aal1 for keys
	// made before it was recorded); its tokens carry it.
	AAL string
}

// Usable reports whether the key is neither revoked nor expired at now.
func (k *APIKey) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// Team is a group inside a team org.
type Team struct {
	ID          string
	OrgID       string
	Name        string
	Description string
	CreatedAt   time.Time
	DeletedAt   *time.Time
	// Managed: a team a SCIM directory created; its membership follows the
	// directory and is not edited by hand.
	Managed     bool
	MemberCount int    // in listings
	MyRole      string // in listings: the caller's team role, "" when none
}

// Team roles.
const (
	TeamLead   = "lead"
	TeamMember = "member"
)

// Invitation kinds.
const (
	InviteEmail = "email"
	InviteLink  = "link"
)

// Invitation invites to an org: an email invitation is bound to one address
// and works once; a link invitation works for anyone any number of times.
// The secret is stored only by hash.
type Invitation struct {
	ID        string
	OrgID     string
	Kind      string
	Role      string
	Email     string // email kind only
	TokenHash string
	// MailTokenHash is the hash of the second secret of an email
	// invitation, the one its mail carries (empty otherwise): only the
	// invitee's mailbox holds it, so accepting with it proves the address.
	MailTokenHash string
	// ByMail reports that InvitationByHash found the invitation by
	// MailTokenHash; it is never stored nor shown.
	ByMail    bool
	InviterID string
	Inviter   string // the inviter's name, read live; empty when they are gone
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: never (link kind)
	UsedAt    *time.Time
	RevokedAt *time.Time
	URL       string // only right after creation: the secret is not kept
}

// Usable reports whether inv can still be accepted at now, its org aside.
func (inv *Invitation) Usable(now time.Time) bool {
	return inv.RevokedAt == nil && (inv.ExpiresAt == nil || now.Before(*inv.ExpiresAt)) &&
		(inv.Kind != InviteEmail || inv.UsedAt == nil)
}

// PersonRow is a person in a directory (org or team members), with their
// role there and when they joined.
type PersonRow struct {
	UserID    string
	Name      string
	Email     string
	AvatarURL string
	Role      string
	JoinedAt  time.Time
}

// Domain claim modes.
const (
	ModeSuggest  = "suggest"
	ModeAutoJoin = "auto_join"
)

// DomainClaim is an org's claim on an email domain, proven by a DNS TXT
// record.
type DomainClaim struct {
	ID         string
	OrgID      string
	Domain     string
	Mode       string
	Token      string
	VerifiedAt *time.Time
	CreatedAt  time.Time
}

// DomainOffer is an org offered to people of a verified domain.
type DomainOffer struct {
	Org    Org
	Domain string
	Mode   string
}

// OrgProfile is an org with its counts, the answer of GET /v1/orgs/{id}.
type OrgProfile struct {
	Org         *Org
	MemberCount int
	TeamCount   int
}

// InvitationPreview is what the public preview of an invitation shows.
type InvitationPreview struct {
	Org     *Org
	Role    string
	Kind    string
	Inviter string
}

// Accepted is the result of accepting an invitation.
type Accepted struct {
	OrgToken
	AlreadyMember bool
	// EmailVerified reports that this accept confirmed the caller's
	// address (an email invitation opened from its mailed link).
	EmailVerified bool
}
