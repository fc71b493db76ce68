package scim

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Settings is a workspace's SCIM settings.
type Settings struct {
	OrgID string
	// ProvisionRole is the role the directory's members are given when
	// provisioned, reactivated or attached: never owner.
	ProvisionRole string
	UpdatedBy     string // "" while the workspace keeps the default
	UpdatedAt     time.Time
}

// ProvisionRoles are the roles a workspace may provision with: every role
// but owner, which only an owner gives, by hand.
var ProvisionRoles = []string{workspace.RoleMember, workspace.RoleBilling, workspace.RoleAdmin}

// Settings returns org orgID's SCIM settings, to its owners and admins.
func (s *Service) Settings(ctx context.Context, p *gatehouse.Principal, orgID string) (*Settings, error) {
	if err := s.manage(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	return s.settings(ctx, s.store, orgID)
}

// settings reads org orgID's settings through st; the default when none
// were saved.
func (s *Service) settings(ctx context.Context, st Store, orgID string) (*Settings, error) {
	set, err := st.Settings(ctx, orgID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return &Settings{OrgID: orgID, ProvisionRole: ProvisionRole}, nil
	}
	if err != nil {
		return nil, gatehouse.Internal("scim settings", err)
	}
	return set, nil
}

// provisionRole is the role org orgID provisions with, read through st;
// member if what is stored is not a provisioning role (never owner).
func (s *Service) provisionRole(ctx context.Context, st Store, orgID string) (string, error) {
	set, err := s.settings(ctx, st, orgID)
	if err != nil {
		return "", err
	}
	if !isProvisionRole(set.ProvisionRole) {
		return ProvisionRole, nil
	}
	return set.ProvisionRole, nil
}

func isProvisionRole(role string) bool {
	for _, r := range ProvisionRoles {
		if r == role {
			return true
		}
	}
	return false
}

// SetProvisionRole sets the role org orgID's directory provisions with;
// owners and admins only (an admin may give admin by hand too), never
// owner; audited. Members already in the workspace keep their roles.
func (s *Service) SetProvisionRole(ctx context.Context, p *gatehouse.Principal, orgID, role string) (*Settings, error) {
	var out *Settings
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.manage(ctx, tx, p, orgID); err != nil {
			return err
		}
		switch {
		case role == workspace.RoleOwner:
			return gatehouse.InvalidField("provision_role", "the provisioning role cannot be owner: owners are made by an owner, by hand")
		case !isProvisionRole(role):
			return gatehouse.InvalidField("provision_role", "provision_role must be one of member, billing, admin")
		}
		cur, err := s.settings(ctx, tx, orgID)
		if err != nil {
			return err
		}
		out = &Settings{OrgID: orgID, ProvisionRole: role, UpdatedBy: p.UserID, UpdatedAt: s.Now()}
		if err := tx.SetSettings(ctx, out); err != nil {
			return gatehouse.Internal("set scim settings", err)
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "scim.settings_updated", "org", orgID,
			map[string]any{"provision_role": role, "old_provision_role": cur.ProvisionRole})
	})
	return out, err
}
