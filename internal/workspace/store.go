package workspace

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
)

// Store persists workspaces. Rules live in Service; the store reads, writes
// and translates driver errors into ErrNotFound and ErrConflict. Methods
// that must be atomic together run inside Tx, whose Store is bound to one
// transaction.
type Store interface {
	// Tx runs fn in a read-write transaction and commits when fn returns nil.
	Tx(ctx context.Context, fn func(tx Store) error) error
	Tables
}

// Tables is Store without its transaction: what workspace reads and writes,
// including the few user rows it needs (a store per consumer may read
// another module's tables). Another module's store provides it too, so that
// its transaction serves workspace's exported functions (HomeOrg, AutoJoin,
// Audit...) as it is.
type Tables interface {
	UserByID(ctx context.Context, id string) (*gatehouse.User, error)
	// UserByEmail is the account whose address has the normalised key
	// (gatehouse.EmailKey); ErrNotFound. An invitation's mail is in its
	// language.
	UserByEmail(ctx context.Context, key string) (*gatehouse.User, error)
	SetDefaultOrg(ctx context.Context, userID, orgID string) error
	// ConfirmEmail marks userID's address verified at at if its
	// normalised key is still emailKey and it is still unverified, and
	// reports whether it did.
	ConfirmEmail(ctx context.Context, userID, emailKey string, at time.Time) (bool, error)
	// LockUser takes the user's row lock until the transaction ends.
	LockUser(ctx context.Context, userID string) error
	// SessionCreated is when sign-in session id was opened (ErrNotFound:
	// none), which bounds the tokens a workspace change mints for it.
	SessionCreated(ctx context.Context, id string) (time.Time, error)

	// LockOrg takes the org's row lock until the transaction ends, so rules
	// over its members (the last owner) see no concurrent change.
	LockOrg(ctx context.Context, orgID string) error
	// ShareOrg keeps the org's row from changing (a delete, a LockOrg
	// holder) until the transaction ends; other ShareOrg holders proceed.
	ShareOrg(ctx context.Context, orgID string) error
	CreateOrg(ctx context.Context, o *Org) error // ErrConflict: slug taken
	OrgByID(ctx context.Context, id string) (*Org, error)
	// OrgRole reads an org (deleted or not) with its ToolStates and
	// userID's role in it in one query; the role is "" when userID is not
	// a member.
	OrgRole(ctx context.Context, orgID, userID string) (*Org, string, error)
	PersonalOrg(ctx context.Context, userID string) (*Org, error)
	SlugTaken(ctx context.Context, slug string) (bool, error)
	AddMember(ctx context.Context, m *Membership) error // ErrConflict: already a member
	Member(ctx context.Context, orgID, userID string) (*Membership, error)
	// ToolStates returns the tools whose state was set explicitly.
	ToolStates(ctx context.Context, orgID string) (map[string]bool, error)

	// UpdateOrg writes name, slug and avatar_url of a live org; ErrConflict: slug taken.
	UpdateOrg(ctx context.Context, o *Org) error
	// RecordPolicy records, with the revocations, that org orgID began
	// requiring two-factor at at: every instance then stops trusting the
	// standings it cached in that org (ToolAccess).
	RecordPolicy(ctx context.Context, orgID string, at time.Time) error
	// ClearDefaultOrg unsets default_org_id of every user whose default is
	// orgID, or of userID only when userID is not empty.
	ClearDefaultOrg(ctx context.Context, orgID, userID string) error
	// CountTeams returns how many live teams org has.
	CountTeams(ctx context.Context, orgID string) (int, error)
	// OrgMembers lists the org's directory ordered by joined_at, then user id.
	OrgMembers(ctx context.Context, orgID string) ([]PersonRow, error)
	// MemberPage is one page of the org's directory in the same order,
	// only the members whose name or email contains f.Query (any case).
	MemberPage(ctx context.Context, orgID string, f MemberFilter) ([]PersonRow, error)
	// CountMembers is how many of the org's members' name or email
	// contain query (any case; "" for all).
	CountMembers(ctx context.Context, orgID, query string) (int, error)
	// MemberByEmail is the member of org with address email; ErrNotFound.
	MemberByEmail(ctx context.Context, orgID, email string) (*PersonRow, error)
	SetMemberRole(ctx context.Context, orgID, userID, role string) error        // ErrNotFound: not a member
	RemoveMember(ctx context.Context, orgID, userID string, at time.Time) error // ErrNotFound: not a member
	// RemoveTeamMemberships removes the user from every team of the org.
	RemoveTeamMemberships(ctx context.Context, orgID, userID string) error

	CreateInvitation(ctx context.Context, inv *Invitation) error
	// InvitationByHash returns the invitation of a secret's hash, with Inviter filled.
	InvitationByHash(ctx context.Context, hash string) (*Invitation, error)
	// UsableInvitations lists the org's invitations usable at now, newest first.
	UsableInvitations(ctx context.Context, orgID string, now time.Time) ([]*Invitation, error)
	// RevokeInvitation revokes an unrevoked invitation of the org; ErrNotFound otherwise.
	RevokeInvitation(ctx context.Context, orgID, id string, at time.Time) error
	// UseInvitation marks an unused, unrevoked, unexpired invitation used;
	// ErrNotFound otherwise. The conditional UPDATE is what makes an email
	// invitation single use under concurrency.
	UseInvitation(ctx context.Context, id string, at time.Time) error
	// CountInvitationMails counts the email invitations of f's scope
	// created after f.Since.
	CountInvitationMails(ctx context.Context, f InvitationMailFilter) (int, error)
	// InvitationMailAt returns the creation time of the email invitation
	// of f's scope after f.Since at offset, oldest first; ErrNotFound
	// when there are not that many.
	InvitationMailAt(ctx context.Context, f InvitationMailFilter, offset int) (time.Time, error)

	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
	// QueueMail queues m in the transaction: it is sent once that
	// commits (internal/jobs), never if it rolls back.
	QueueMail(ctx context.Context, m mail.Message) error
	// OrgCounts returns how many members and owners org has.
	OrgCounts(ctx context.Context, orgID string) (members, owners int, err error)
	SoftDeleteOrg(ctx context.Context, orgID string, at time.Time) error

	CreateAPIKey(ctx context.Context, k *APIKey) error
	APIKeyByID(ctx context.Context, id string) (*APIKey, error)
	// ListAPIKeys lists unrevoked keys, newest first: a user's user keys
	// (userID set) or an org's org keys (orgID set).
	ListAPIKeys(ctx context.Context, kind, userID, orgID string) ([]APIKey, error)
	// RevokeAPIKey revokes a live key; ErrNotFound when there is none.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) error

	CreateTeam(ctx context.Context, t *Team) error
	// TeamByID returns a live team of org.
	TeamByID(ctx context.Context, orgID, teamID string) (*Team, error)
	// ListTeams lists org's live teams with member counts and userID's role.
	ListTeams(ctx context.Context, orgID, userID string) ([]Team, error)
	UpdateTeam(ctx context.Context, t *Team) error
	SoftDeleteTeam(ctx context.Context, teamID string, at time.Time) error
	TeamMembers(ctx context.Context, teamID string) ([]PersonRow, error)
	// TeamRole returns userID's role in the team; ErrNotFound when none.
	TeamRole(ctx context.Context, teamID, userID string) (string, error)
	UpsertTeamMember(ctx context.Context, teamID, userID, role string, at time.Time) error
	RemoveTeamMember(ctx context.Context, teamID, userID string) error

	SetTool(ctx context.Context, orgID, tool string, enabled bool) error

	CreateDomain(ctx context.Context, d *DomainClaim) error // ErrConflict: claimed here already
	ListDomains(ctx context.Context, orgID string) ([]DomainClaim, error)
	DomainByID(ctx context.Context, orgID, id string) (*DomainClaim, error)
	SetDomainMode(ctx context.Context, id, mode string) error
	DeleteDomain(ctx context.Context, id string) error
	// MarkDomainVerified sets verified_at; ErrConflict when another org has
	// verified the domain.
	MarkDomainVerified(ctx context.Context, id string, at time.Time) error
	// DomainVerifiedBy returns the org that verified domain; ErrNotFound if none.
	DomainVerifiedBy(ctx context.Context, domain string) (string, error)
	// DomainOffers lists the live orgs with a verified claim on domain.
	DomainOffers(ctx context.Context, domain string) ([]DomainOffer, error)
	// PendingProvisions lists the pending SCIM directory users of address
	// key in live orgs: provisioned outside the orgs' verified domains,
	// waiting for someone to prove the address; Role is the org's saved
	// provisioning role ("" when none).
	PendingProvisions(ctx context.Context, key string) ([]Provision, error)
	// AttachProvision links the pending directory user id to userID;
	// ErrNotFound when it is not pending.
	AttachProvision(ctx context.Context, id, userID string) error
	// ProvisionTeams lists the live teams of the SCIM groups directory
	// user dirUserID is in.
	ProvisionTeams(ctx context.Context, dirUserID string) ([]string, error)
	// AuditLog returns org's newest entries, optionally of one tool or action.
	AuditLog(ctx context.Context, orgID, tool, action string, limit int) ([]gatehouse.AuditEntry, error)
	// AuditLogWhere returns org's newest entries selected by f
	// (f.Actor ActorSCIM: every "scim:" actor).
	AuditLogWhere(ctx context.Context, orgID string, f AuditFilter, limit int) ([]gatehouse.AuditEntry, error)
	// AuditNames returns the names of refs that still exist: users
	// anywhere, the other kinds in org orgID only.
	AuditNames(ctx context.Context, orgID string, refs map[AuditRef]bool) (map[AuditRef]string, error)
	// AuditTools lists the distinct tools in org's log.
	AuditTools(ctx context.Context, orgID string) ([]string, error)

	CreateApplication(ctx context.Context, a *Application) error
	// ApplicationByID is a live application of a live org; ErrNotFound
	// otherwise.
	ApplicationByID(ctx context.Context, id string) (*Application, error)
	// ListApplications lists org's live applications, oldest first.
	ListApplications(ctx context.Context, orgID string) ([]Application, error)
	CountApplications(ctx context.Context, orgID string) (int, error)
	// UpdateApplication writes every field of a live application but its
	// org, creator and creation; ErrNotFound when it is not live.
	UpdateApplication(ctx context.Context, a *Application) error
	// DeleteApplication marks a live application deleted and revokes
	// every grant to clientID with its sessions (recorded in the
	// revocations); ErrNotFound when it is not live.
	DeleteApplication(ctx context.Context, id, clientID string, at time.Time) error
}
