package workspace

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// Permission names an org permission (spec 5.8, CONTRACT §4).
type Permission string

// The org permissions.
const (
	PermSettings Permission = "org.settings.manage"
	PermMembers  Permission = "org.members.manage"
	PermTeams    Permission = "org.teams.manage"
	PermTools    Permission = "org.tools.manage"
	PermDomains  Permission = "org.domains.manage"
	PermDelete   Permission = "org.delete"
)

// adminPermissions are what an admin holds; an owner holds every permission,
// billing and member none.
var adminPermissions = map[Permission]bool{PermSettings: true, PermMembers: true, PermTeams: true, PermTools: true, PermDomains: true}

// RoleHas reports whether role holds perm: the one table every operation asks.
func RoleHas(role string, perm Permission) bool {
	switch role {
	case RoleOwner:
		return true
	case RoleAdmin:
		return adminPermissions[perm]
	}
	return false
}

// access is the caller's standing in one org.
type access struct {
	org    *Org
	role   string
	orgKey bool // the caller is an org service-account key, not a person
}

var errOrgNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")

// ErrMFAPolicy answers a member without a second factor in an org that
// requires one.
var ErrMFAPolicy = gatehouse.Errorf(gatehouse.KindForbidden,
	"this workspace requires two-factor authentication; set up a factor at /v1/me/factors and sign in again")

// orgAccess is memberAccess under the org's policy: in an org requiring
// two-factor, a token below aal2 is refused (403), whatever made it: a
// sign-in, or a key or OAuth grant, whose tokens carry the level of the
// session that made them (docs/decisions.md).
func (s *Service) orgAccess(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string) (*access, error) {
	a, err := s.memberAccess(ctx, st, p, orgID)
	if err != nil {
		return nil, err
	}
	if err := a.org.Admits(p.Assurance); err != nil {
		return nil, err
	}
	return a, nil
}

// Admits answers ErrMFAPolicy when o requires two-factor and lvl is below
// it: neither a token nor a credential at lvl may act in o.
func (o *Org) Admits(lvl gatehouse.Assurance) error {
	if o.RequireMFA && lvl.AAL != gatehouse.AAL2 {
		return ErrMFAPolicy
	}
	return nil
}

// memberAccess resolves the caller's live role in org orgID. An org that does
// not exist, is deleted, or that the caller is not in reads as not found,
// never forbidden. Tokens from keys and OAuth grants reach only the one
// workspace they are bound to.
func (s *Service) memberAccess(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string) (*access, error) {
	if !gatehouse.IsID(orgID) {
		return nil, errOrgNotFound
	}
	if (p.Via == gatehouse.ViaAPIKey || p.Via == gatehouse.ViaOAuth) && p.OrgID != orgID {
		return nil, errOrgNotFound
	}
	o, role, err := st.OrgRole(ctx, orgID, p.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && o.DeletedAt != nil) {
		return nil, errOrgNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find org", err)
	}
	if role != "" {
		return &access{org: o, role: role}, nil
	}
	if p.Via == gatehouse.ViaAPIKey {
		// An org key acts with its fixed role; its id is the token subject.
		k, err := st.APIKeyByID(ctx, p.UserID)
		if err == nil && k.Kind == KeyOrg && k.OrgID == orgID && k.Usable(s.Now()) {
			return &access{org: o, role: k.Role, orgKey: true}, nil
		}
	}
	return nil, errOrgNotFound
}

// require answers 403 unless the caller holds perm.
func (a *access) require(perm Permission) error {
	if !RoleHas(a.role, perm) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "your role (%s) lacks the %s permission", a.role, perm)
	}
	return nil
}

// capabilities is what a's role lets the caller do in its org.
func (a *access) capabilities() Capabilities {
	return Capabilities{Role: a.role, Team: a.org.Kind == OrgTeam}
}

// teamOnly answers 403 on a personal org.
func (a *access) teamOnly() error {
	if a.org.Kind != OrgTeam {
		return gatehouse.Errorf(gatehouse.KindForbidden, "this operation is for team organizations only, not a personal workspace")
	}
	return nil
}

// person answers 403 when the caller is a service account: the operation
// needs a person (a team lead, a member).
func (a *access) person() error {
	if a.orgKey {
		return gatehouse.Errorf(gatehouse.KindForbidden, "a service-account key cannot do this; sign in as a person")
	}
	return nil
}

// authorize resolves access to orgID and checks, in order, the team-org
// rule (when teamOnly) and perm (when not empty).
func (s *Service) authorize(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string, perm Permission, teamOnly bool) (*access, error) {
	a, err := s.orgAccess(ctx, st, p, orgID)
	if err != nil {
		return nil, err
	}
	if teamOnly {
		if err := a.teamOnly(); err != nil {
			return nil, err
		}
	}
	if perm != "" {
		if err := a.require(perm); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// OrgAccess is the caller's live standing in org orgID through st: the org
// and the caller's role there (an org key's fixed role). Not found, a
// deleted org and an org the caller is not in all answer 404. The org's
// two-factor policy is not applied: the caller's own description
// (GET /v1/auth/me) answers below it.
func (s *Service) OrgAccess(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string) (*Org, string, error) {
	a, err := s.memberAccess(ctx, st, p, orgID)
	if err != nil {
		return nil, "", err
	}
	return a.org, a.role, nil
}

// ManageSettings is the access check of an owner or admin of a team org
// (a person, not an org key) on its settings through st, for the modules
// that keep per-org settings of their own (internal/sso): the org, or the
// answer authorize gives.
func (s *Service) ManageSettings(ctx context.Context, st Tables, p *gatehouse.Principal, orgID string) (*Org, error) {
	a, err := s.authorize(ctx, st, p, orgID, PermSettings, true)
	if err != nil {
		return nil, err
	}
	if err := a.person(); err != nil {
		return nil, err
	}
	return a.org, nil
}

// Capabilities is what a member may do in one org, from the role table and
// the org's kind. The operations ask the same methods before they act
// (teamAccess, SetMemberRole, RemoveMember), so a page that offers a
// control only when its capability allows it offers what the service
// would do, and never re-derives a rule of its own.
type Capabilities struct {
	Role string // the member's org role
	Team bool   // a team org, not a personal workspace
}

// Capabilities is the caller's capabilities in the org of this listing.
func (o *OrgListing) Capabilities() Capabilities {
	return Capabilities{Role: o.Role, Team: o.Kind == OrgTeam}
}

// Can reports whether the role holds perm (RoleHas).
func (c Capabilities) Can(perm Permission) bool { return RoleHas(c.Role, perm) }

// CanInTeam reports whether an operation for team orgs only that needs
// perm is allowed (authorize with teamOnly): a team org and the permission.
func (c Capabilities) CanInTeam(perm Permission) bool { return c.Team && c.Can(perm) }

// ManageTeam reports whether the member may change a team in which they
// have teamRole ("" for none): org.teams.manage, or leading the team.
func (c Capabilities) ManageTeam(teamRole string) bool {
	return c.Team && (c.Can(PermTeams) || teamRole == TeamLead)
}

// ChangeRole reports whether the member may move another member from role
// from to role to: org.members.manage, and org.owners.manage when either
// is owner.
func (c Capabilities) ChangeRole(from, to string) bool {
	return c.Can(PermMembers) && ((from != RoleOwner && to != RoleOwner) || c.Can(PermOwners))
}

// Remove reports whether the member may remove another member whose role
// is target: org.members.manage, and org.owners.manage for an owner.
// (Leaving, removing oneself, needs no permission.)
func (c Capabilities) Remove(target string) bool {
	return c.Can(PermMembers) && (target != RoleOwner || c.Can(PermOwners))
}

// AssignableRoles are the roles the member may give another member, most
// powerful first: none without org.members.manage, owner only to an owner.
func (c Capabilities) AssignableRoles() []string {
	if !c.Can(PermMembers) {
		return nil
	}
	var roles []string
	for _, role := range []string{RoleOwner, RoleAdmin, RoleBilling, RoleMember} {
		if role != RoleOwner || c.Can(PermOwners) {
			roles = append(roles, role)
		}
	}
	return roles
}
