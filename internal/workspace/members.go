package workspace

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// PermOwners is moving a member to or from owner, and removing an owner:
// like org.delete, no role but the owner holds it (see RoleHas).
const PermOwners Permission = "org.owners.manage"

// IsRole reports whether role is one of the four org roles.
func IsRole(role string) bool {
	switch role {
	case RoleOwner, RoleAdmin, RoleBilling, RoleMember:
		return true
	}
	return false
}

var (
	errMemberNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "member not found")
	errLastOwner      = gatehouse.Errorf(gatehouse.KindConflict, "an organization needs at least one owner: make another member owner first")
	errOwnersOnly     = gatehouse.Errorf(gatehouse.KindForbidden, "only an owner can move a member to or from owner, or remove an owner")
)

// OrgMembers lists org orgID's directory, ordered by join date.
func (s *Service) OrgMembers(ctx context.Context, p *gatehouse.Principal, orgID string) ([]PersonRow, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, "", false); err != nil {
		return nil, err
	}
	ms, err := s.store.OrgMembers(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("list members", err)
	}
	return ms, nil
}

// MemberFilter asks for one page of a directory: the members whose name or
// email contains Query (any case; "" for all), Limit of them after After's
// position when set (keyset paging), else after Offset of them.
type MemberFilter struct {
	Query         string
	Limit, Offset int
	After         *MemberCursor
}

// MemberCursor is a position in a directory's order: the member who joined
// at JoinedAt with id UserID, the last one of the page before.
type MemberCursor struct {
	JoinedAt time.Time
	UserID   string
}

// MemberPage is one page of org orgID's directory searched by f.Query, and
// whether more follow (one row more is read, nothing is counted): paged and
// searched in the store, so a workspace of 10,000 members is not read whole
// for a page of 50.
func (s *Service) MemberPage(ctx context.Context, p *gatehouse.Principal, orgID string, f MemberFilter) ([]PersonRow, bool, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, "", false); err != nil {
		return nil, false, err
	}
	f.Query = strings.ToLower(strings.TrimSpace(f.Query))
	f.Limit, f.Offset = max(1, min(f.Limit, 500)), max(0, f.Offset)
	f.Limit++
	ms, err := s.store.MemberPage(ctx, orgID, f)
	if err != nil {
		return nil, false, gatehouse.Internal("member page", err)
	}
	if more := len(ms) == f.Limit; more {
		return ms[:f.Limit-1], true, nil
	}
	return ms, false, nil
}

// CountMembers is how many of org orgID's members' name or email contain
// query (any case; "" for all): a scan of every match, for the rare page
// that needs it.
func (s *Service) CountMembers(ctx context.Context, p *gatehouse.Principal, orgID, query string) (int, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, "", false); err != nil {
		return 0, err
	}
	n, err := s.store.CountMembers(ctx, orgID, strings.ToLower(strings.TrimSpace(query)))
	if err != nil {
		return 0, gatehouse.Internal("count members", err)
	}
	return n, nil
}

// MemberByEmail is the user id of org orgID's member with address email,
// for forms that name a member by address; any member may ask, as they may
// read the directory.
func (s *Service) MemberByEmail(ctx context.Context, p *gatehouse.Principal, orgID, email string) (string, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, "", false); err != nil {
		return "", err
	}
	m, err := s.store.MemberByEmail(ctx, orgID, strings.ToLower(strings.TrimSpace(email)))
	if errors.Is(err, gatehouse.ErrNotFound) {
		return "", gatehouse.InvalidField("email", "email is not the address of a member of this workspace")
	}
	if err != nil {
		return "", gatehouse.Internal("member by email", err)
	}
	return m.UserID, nil
}

// SetMemberRole changes a member's role. The org's row lock is taken first,
// so the caller's role and the owner count are read with no concurrent
// change: of two owners demoting each other at once, the second finds it is
// no longer an owner.
func (s *Service) SetMemberRole(ctx context.Context, p *gatehouse.Principal, orgID, userID, role string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		a, err := s.lockOrg(ctx, tx, p, orgID, PermMembers, true)
		if err != nil {
			return err
		}
		if role == "" {
			return gatehouse.InvalidField("role", "role is required")
		}
		if !IsRole(role) {
			return gatehouse.InvalidField("role", "role must be one of owner, admin, billing, member")
		}
		target, err := s.member(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		if target.Role == role {
			return nil
		}
		if !a.capabilities().ChangeRole(target.Role, role) {
			return errOwnersOnly
		}
		if err := s.keepAnOwner(ctx, tx, orgID, target); err != nil {
			return err
		}
		if err := tx.SetMemberRole(ctx, orgID, userID, role); err != nil {
			return gatehouse.Internal("set member role", err)
		}
		if err := s.Audit(ctx, tx, orgID, p.UserID, "member.role_changed", "user", userID,
			map[string]any{"old_role": target.Role, "new_role": role}); err != nil {
			return gatehouse.Internal("audit", err)
		}
		return nil
	})
}

// RemoveMember removes userID from org orgID: leaving when it is the caller
// (no permission needed), else removing someone (org.members.manage; an
// owner only by an owner). Their team memberships in the org go too, and the
// org stops being their default.
func (s *Service) RemoveMember(ctx context.Context, p *gatehouse.Principal, orgID, userID string) error {
	defer s.forgetStanding(userID, orgID)
	return s.store.Tx(ctx, func(tx Store) error {
		a, err := s.lockOrg(ctx, tx, p, orgID, "", true)
		if err != nil {
			return err
		}
		self := userID == p.UserID
		if !self {
			if err := a.require(PermMembers); err != nil {
				return err
			}
		}
		target, err := s.member(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		if !self && !a.capabilities().Remove(target.Role) {
			return errOwnersOnly
		}
		if err := s.keepAnOwner(ctx, tx, orgID, target); err != nil {
			return err
		}
		if err := tx.RemoveMember(ctx, orgID, userID, s.Now()); err != nil {
			return gatehouse.Internal("remove member", err)
		}
		if err := tx.RemoveTeamMemberships(ctx, orgID, userID); err != nil {
			return gatehouse.Internal("remove team memberships", err)
		}
		if err := tx.ClearDefaultOrg(ctx, orgID, userID); err != nil {
			return gatehouse.Internal("clear default org", err)
		}
		// Leaving is a removal (spec section 3 has one transition for both,
		// CONTRACT §4 names identity.member.removed); the actor and meta
		// tell them apart.
		if err := s.Audit(ctx, tx, orgID, p.UserID, "member.removed", "user", userID, map[string]any{"role": target.Role, "self": self}); err != nil {
			return gatehouse.Internal("audit", err)
		}
		return nil
	})
}

// member returns userID's membership of orgID or 404.
func (s *Service) member(ctx context.Context, st Tables, orgID, userID string) (*Membership, error) {
	if !gatehouse.IsID(userID) {
		return nil, errMemberNotFound
	}
	m, err := st.Member(ctx, orgID, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errMemberNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find member", err)
	}
	return m, nil
}

// keepAnOwner answers 409 when target is the org's last owner, who is about
// to stop being one. Call it with the org locked.
func (s *Service) keepAnOwner(ctx context.Context, st Tables, orgID string, target *Membership) error {
	if target.Role != RoleOwner {
		return nil
	}
	_, owners, err := st.OrgCounts(ctx, orgID)
	if err != nil {
		return gatehouse.Internal("count owners", err)
	}
	if owners <= 1 {
		return errLastOwner
	}
	return nil
}
