package scim

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// ProvisionRole is the role a provisioned account is given in a
// workspace that did not choose another (Settings): never owner
// (docs/decisions.md).
const ProvisionRole = workspace.RoleMember

// Page bounds of a list (RFC 7644 section 3.4.2.4).
const (
	DefaultCount = 100
	MaxCount     = 1000
)

var (
	errUserNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "user not found")
	errUserTaken    = gatehouse.Errorf(gatehouse.KindConflict, "a user with this userName exists in this workspace").WithCode(CodeUniqueness)
	errLastOwner    = gatehouse.Errorf(gatehouse.KindConflict,
		"this user is the workspace's last owner; make another member owner before deprovisioning them").WithCode(CodeMutability)
)

// Query is a list request: filter, 1-based StartIndex and Count.
type Query struct {
	Filter     string
	StartIndex int
	Count      int
}

// ListResult is one page of a list and how many matched in all.
type ListResult struct {
	Total      int
	StartIndex int
	Resources  []map[string]any
}

// ListUsers lists tok's workspace's directory users matching q.
func (s *Service) ListUsers(ctx context.Context, tok *Token, q Query) (*ListResult, error) {
	var f filter
	by := Lookup{}
	if strings.TrimSpace(q.Filter) != "" {
		var err error
		if f, err = parseFilter(q.Filter); err != nil {
			return nil, err
		}
		by, _ = eqLookup(f)
	}
	us, err := s.store.DirUsers(ctx, tok.OrgID, by)
	if err != nil {
		return nil, gatehouse.Internal("list scim users", err)
	}
	var all []map[string]any
	for i := range us {
		res := s.render(&us[i])
		if f == nil || f.match(res) {
			all = append(all, res)
		}
	}
	return page(all, q), nil
}

// User reads directory user id of tok's workspace.
func (s *Service) User(ctx context.Context, tok *Token, id string) (map[string]any, error) {
	u, err := s.dirUser(ctx, s.store, tok, id)
	if err != nil {
		return nil, err
	}
	return s.render(u), nil
}

func (s *Service) dirUser(ctx context.Context, st Store, tok *Token, id string) (*DirUser, error) {
	if !gatehouse.IsID(id) {
		return nil, errUserNotFound
	}
	u, err := st.DirUser(ctx, tok.OrgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errUserNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find scim user", err)
	}
	return u, nil
}

// CreateUser provisions the user resource res in tok's workspace: an
// address in one of the workspace's verified domains becomes an account
// (created without a password, unverified, if missing) that is a member
// with the workspace's provisioning role; any other address stays pending until someone
// proves it (workspace.AutoJoin).
func (s *Service) CreateUser(ctx context.Context, tok *Token, res map[string]any) (map[string]any, error) {
	u := &DirUser{ID: gatehouse.NewID(), OrgID: tok.OrgID, CreatedAt: s.Now(), UpdatedAt: s.Now()}
	if err := absorb(u, res); err != nil {
		return nil, err
	}
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := tx.ShareOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("share org", err)
		}
		if err := s.link(ctx, tx, u); err != nil {
			return err
		}
		if err := tx.CreateDirUser(ctx, u); errors.Is(err, gatehouse.ErrConflict) {
			return errUserTaken
		} else if err != nil {
			return gatehouse.Internal("create scim user", err)
		}
		if u.Active {
			if err := s.grant(ctx, tx, tok, u); err != nil {
				return err
			}
		}
		return s.audit(ctx, tx, tok, "scim.user_created", u, map[string]any{"user_name": u.UserName, "active": u.Active, "pending": u.UserID == ""})
	})
	if err != nil {
		return nil, err
	}
	return s.render(u), nil
}

// ReplaceUser replaces directory user id with res (PUT).
func (s *Service) ReplaceUser(ctx context.Context, tok *Token, id string, res map[string]any) (map[string]any, error) {
	return s.changeUser(ctx, tok, id, func(_ *DirUser, next *DirUser) error { return absorb(next, res) })
}

// PatchUser applies PATCH operations to directory user id.
func (s *Service) PatchUser(ctx context.Context, tok *Token, id string, ops []patchOp) (map[string]any, error) {
	return s.changeUser(ctx, tok, id, func(cur *DirUser, next *DirUser) error {
		res := s.render(cur)
		if err := applyPatch(res, ops); err != nil {
			return err
		}
		return absorb(next, res)
	})
}

// changeUser reads directory user id, lets change compute its next state
// and carries out what changed: a new userName moves the link to the
// account of the new address; active false ends the account's membership
// and access here, active true restores the membership (revoked keys
// stay revoked).
func (s *Service) changeUser(ctx context.Context, tok *Token, id string, change func(cur, next *DirUser) error) (map[string]any, error) {
	var out *DirUser
	ended := false
	err := s.store.Tx(ctx, func(tx Store) error {
		ended = false // a retried transaction starts over
		if err := tx.ShareOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("share org", err)
		}
		cur, err := s.dirUser(ctx, tx, tok, id)
		if err != nil {
			return err
		}
		next := *cur
		if err := change(cur, &next); err != nil {
			return err
		}
		next.UpdatedAt = s.Now()
		meta := map[string]any{"user_name": next.UserName}
		if next.UserNameKey != cur.UserNameKey {
			if cur.UserID != "" && cur.Active {
				if err := s.revoke(ctx, tx, tok, cur); err != nil {
					return err
				}
				ended = true
			}
			next.UserID = ""
			if err := s.link(ctx, tx, &next); err != nil {
				return err
			}
			if next.Active {
				if err := s.grant(ctx, tx, tok, &next); err != nil {
					return err
				}
			}
			meta["old_user_name"] = cur.UserName
		} else if next.Active != cur.Active && next.UserID != "" {
			if next.Active {
				err = s.grant(ctx, tx, tok, &next)
			} else {
				err, ended = s.revoke(ctx, tx, tok, &next), true
			}
			if err != nil {
				return err
			}
		}
		if err := tx.UpdateDirUser(ctx, &next); errors.Is(err, gatehouse.ErrConflict) {
			return errUserTaken
		} else if err != nil {
			return gatehouse.Internal("update scim user", err)
		}
		action := "scim.user_updated"
		if next.Active != cur.Active {
			action, meta["active"] = "scim.user_deactivated", false
			if next.Active {
				action, meta["active"] = "scim.user_reactivated", true
			}
		}
		out = &next
		return s.audit(ctx, tx, tok, action, &next, meta)
	})
	if err != nil {
		return nil, err
	}
	if ended {
		// This instance's cached standings go now (others' within
		// cache.TTL; the member revocation refuses tokens within a poll).
		s.ws.ForgetStandings()
	}
	return s.render(out), nil
}

// DeleteUser deletes directory user id: its account leaves the workspace
// as with active false; the account itself stays (it may be in others).
func (s *Service) DeleteUser(ctx context.Context, tok *Token, id string) error {
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := tx.ShareOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("share org", err)
		}
		u, err := s.dirUser(ctx, tx, tok, id)
		if err != nil {
			return err
		}
		if u.UserID != "" && u.Active {
			if err := s.revoke(ctx, tx, tok, u); err != nil {
				return err
			}
		}
		if err := tx.DeleteDirUser(ctx, tok.OrgID, id); err != nil {
			return gatehouse.Internal("delete scim user", err)
		}
		return s.audit(ctx, tx, tok, "scim.user_deleted", u, map[string]any{"user_name": u.UserName})
	})
	if err == nil {
		s.ws.ForgetStandings()
	}
	return err
}

// link sets u.UserID to the account u's address stands for, when the
// address is in a domain tok's workspace verified: the account of a
// verified address, or a new account (no password, unverified). An
// unverified account of someone else's making is never linked: whoever
// registered it may not own the mailbox; its owner's proof of the address
// attaches it then (workspace.AutoJoin), once the account's earlier
// credentials are gone.
func (s *Service) link(ctx context.Context, tx Store, u *DirUser) error {
	by, err := tx.DomainVerifiedBy(ctx, u.UserNameKey[strings.LastIndexByte(u.UserNameKey, '@')+1:])
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && by != u.OrgID) {
		return nil // pending until the address is proven
	}
	if err != nil {
		return gatehouse.Internal("domain verified by", err)
	}
	acct, err := tx.UserByEmail(ctx, u.UserNameKey)
	switch {
	case err == nil && acct.EmailVerified:
		u.UserID = acct.ID
	case err == nil:
		// Pending: the owner of the mailbox claims it.
	case errors.Is(err, gatehouse.ErrNotFound):
		now := s.Now()
		acct = &gatehouse.User{ID: gatehouse.NewID(), Email: u.UserName, EmailKey: u.UserNameKey, Name: clipName(personName(u)), CreatedAt: now, UpdatedAt: now}
		if err := tx.CreateUser(ctx, acct); err != nil {
			return gatehouse.Internal("create account", err)
		}
		u.UserID = acct.ID
	default:
		return gatehouse.Internal("find account", err)
	}
	return nil
}

func clipName(n string) string {
	if r := []rune(n); len(r) > workspace.MaxName {
		return string(r[:workspace.MaxName])
	}
	return n
}

// grant makes u's account a member of tok's workspace with the
// workspace's provisioning role; an account already a member keeps its
// role.
func (s *Service) grant(ctx context.Context, tx Store, tok *Token, u *DirUser) error {
	if u.UserID == "" {
		return nil
	}
	role, err := s.provisionRole(ctx, tx, tok.OrgID)
	if err != nil {
		return err
	}
	err = tx.AddMember(ctx, &workspace.Membership{OrgID: tok.OrgID, UserID: u.UserID, Role: role, JoinedAt: s.Now()})
	if err == nil {
		err = s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), "member.joined", "user", u.UserID, map[string]any{"via": "scim", "role": role})
	} else if errors.Is(err, gatehouse.ErrConflict) {
		err = nil // a member already keeps their role
	}
	if err != nil {
		return gatehouse.Internal("add member", err)
	}
	teams, err := tx.ProvisionTeams(ctx, u.ID)
	if err != nil {
		return gatehouse.Internal("user groups", err)
	}
	for _, team := range teams {
		if err := s.joinTeam(ctx, tx, tok, team, u); err != nil {
			return err
		}
	}
	return nil
}

// revoke ends u's account's membership of tok's workspace: its team
// memberships there go too, the workspace stops being its default, the
// API keys it made there are revoked, and the removal is recorded in the
// revocations, so every instance refuses its tokens in this workspace
// within a poll (and its tool-API standing within cache.TTL). Its other
// workspaces are untouched. The last owner is never removed.
func (s *Service) revoke(ctx context.Context, tx Store, tok *Token, u *DirUser) error {
	m, err := tx.Member(ctx, tok.OrgID, u.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil
	}
	if err != nil {
		return gatehouse.Internal("find member", err)
	}
	if m.Role == workspace.RoleOwner {
		if err := tx.LockOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("lock org", err)
		}
		if _, owners, err := tx.OrgCounts(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("count owners", err)
		} else if owners <= 1 {
			return errLastOwner
		}
	}
	now := s.Now()
	if err := tx.RemoveMember(ctx, tok.OrgID, u.UserID, now); err != nil {
		return gatehouse.Internal("remove member", err)
	}
	if err := tx.RemoveTeamMemberships(ctx, tok.OrgID, u.UserID); err != nil {
		return gatehouse.Internal("remove team memberships", err)
	}
	if err := tx.ClearDefaultOrg(ctx, tok.OrgID, u.UserID); err != nil {
		return gatehouse.Internal("clear default org", err)
	}
	keys, err := tx.RevokeMemberKeys(ctx, tok.OrgID, u.UserID, now)
	if err != nil {
		return gatehouse.Internal("revoke keys", err)
	}
	return s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), "member.removed", "user", u.UserID,
		map[string]any{"via": "scim", "role": m.Role, "api_keys_revoked": keys})
}

// audit writes a SCIM change to the workspace's log, with actor
// scim:<token id>.
func (s *Service) audit(ctx context.Context, tx Store, tok *Token, action string, u *DirUser, meta map[string]any) error {
	if err := s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), action, "scim_user", u.ID, meta); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
