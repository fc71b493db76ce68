package scim

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

var errGroupNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "group not found")

// renderGroup is g as a SCIM Group resource (RFC 7643 section 4.2).
func (s *Service) renderGroup(g *Group, members []DirUser) map[string]any {
	ms := make([]any, 0, len(members))
	for _, m := range members {
		ms = append(ms, map[string]any{"value": m.ID, "display": m.UserName, "$ref": s.base + "/Users/" + m.ID})
	}
	res := map[string]any{"schemas": []any{SchemaGroup}, "id": g.TeamID, "displayName": g.DisplayName, "members": ms,
		"meta": map[string]any{"resourceType": "Group", "created": stamp(g.CreatedAt), "lastModified": stamp(g.UpdatedAt),
			"location": s.base + "/Groups/" + g.TeamID}}
	if g.ExternalID != "" {
		res["externalId"] = g.ExternalID
	}
	return res
}

// groupInput is what a Group resource sets: its name, externalId and
// members (directory user ids, each once).
type groupInput struct {
	name, externalID string
	members          []string
}

func absorbGroup(res map[string]any) (*groupInput, error) {
	dn, _ := getKey(res, "displayName").(string)
	name, err := workspace.CheckName("displayName", dn)
	if err != nil {
		return nil, invalid(CodeInvalidValue, "displayName must be 2 to %d characters on one line", workspace.MaxName)
	}
	in := &groupInput{name: name}
	if v := getKey(res, "externalId"); v != nil {
		if in.externalID, _ = v.(string); in.externalID == "" && v != "" {
			return nil, invalid(CodeInvalidValue, "externalId must be a string")
		}
	}
	seen := map[string]bool{}
	ms, _ := getKey(res, "members").([]any)
	for _, m := range ms {
		obj, _ := m.(map[string]any)
		id, _ := getKey(obj, "value").(string)
		if id == "" {
			return nil, invalid(CodeInvalidValue, "each member needs a value: a user's id")
		}
		if !seen[id] {
			seen[id] = true
			in.members = append(in.members, id)
		}
	}
	return in, nil
}

// ListGroups lists tok's workspace's groups matching q.
func (s *Service) ListGroups(ctx context.Context, tok *Token, q Query) (*ListResult, error) {
	var f filter
	if strings.TrimSpace(q.Filter) != "" {
		var err error
		if f, err = parseFilter(q.Filter); err != nil {
			return nil, err
		}
	}
	gs, err := s.store.Groups(ctx, tok.OrgID)
	if err != nil {
		return nil, gatehouse.Internal("list groups", err)
	}
	var all []map[string]any
	for i := range gs {
		ms, err := s.store.GroupMembers(ctx, gs[i].TeamID)
		if err != nil {
			return nil, gatehouse.Internal("group members", err)
		}
		if res := s.renderGroup(&gs[i], ms); f == nil || f.match(res) {
			all = append(all, res)
		}
	}
	return page(all, q), nil
}

// page is the page of all that q asks for.
func page(all []map[string]any, q Query) *ListResult {
	start, count := max(q.StartIndex, 1), min(max(q.Count, 0), MaxCount)
	out := &ListResult{Total: len(all), StartIndex: start, Resources: []map[string]any{}}
	if start-1 < len(all) {
		out.Resources = all[start-1 : min(len(all), start-1+count)]
	}
	return out
}

// Group reads group id of tok's workspace.
func (s *Service) Group(ctx context.Context, tok *Token, id string) (map[string]any, error) {
	g, ms, err := s.group(ctx, s.store, tok, id)
	if err != nil {
		return nil, err
	}
	return s.renderGroup(g, ms), nil
}

func (s *Service) group(ctx context.Context, st Store, tok *Token, id string) (*Group, []DirUser, error) {
	if !gatehouse.IsID(id) {
		return nil, nil, errGroupNotFound
	}
	g, err := st.Group(ctx, tok.OrgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, errGroupNotFound
	}
	if err != nil {
		return nil, nil, gatehouse.Internal("find group", err)
	}
	ms, err := st.GroupMembers(ctx, id)
	if err != nil {
		return nil, nil, gatehouse.Internal("group members", err)
	}
	return g, ms, nil
}

// CreateGroup creates a managed team of tok's workspace for group res.
func (s *Service) CreateGroup(ctx context.Context, tok *Token, res map[string]any) (map[string]any, error) {
	in, err := absorbGroup(res)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.ShareOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("share org", err)
		}
		now := s.Now()
		t := &workspace.Team{ID: gatehouse.NewID(), OrgID: tok.OrgID, Name: in.name, CreatedAt: now, Managed: true}
		if err := tx.CreateTeam(ctx, t); err != nil {
			return gatehouse.Internal("create team", err)
		}
		g := &Group{TeamID: t.ID, OrgID: tok.OrgID, DisplayName: t.Name, ExternalID: in.externalID, CreatedAt: now, UpdatedAt: now}
		if err := tx.CreateGroup(ctx, g); err != nil {
			return gatehouse.Internal("create group", err)
		}
		ms, err := s.setMembers(ctx, tx, tok, g.TeamID, nil, in.members)
		if err != nil {
			return err
		}
		out = s.renderGroup(g, ms)
		return s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), "scim.group_created", "team", t.ID, map[string]any{"name": t.Name, "members": len(ms)})
	})
	return out, err
}

// ReplaceGroup replaces group id with res (PUT).
func (s *Service) ReplaceGroup(ctx context.Context, tok *Token, id string, res map[string]any) (map[string]any, error) {
	return s.changeGroup(ctx, tok, id, func(map[string]any) (map[string]any, error) { return res, nil })
}

// PatchGroup applies PATCH operations to group id: members add and remove
// by value arrays or by filter (members[value eq "…"]), displayName.
func (s *Service) PatchGroup(ctx context.Context, tok *Token, id string, ops []patchOp) (map[string]any, error) {
	return s.changeGroup(ctx, tok, id, func(cur map[string]any) (map[string]any, error) {
		return cur, applyPatch(cur, ops)
	})
}

func (s *Service) changeGroup(ctx context.Context, tok *Token, id string, change func(cur map[string]any) (map[string]any, error)) (map[string]any, error) {
	var out map[string]any
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := tx.ShareOrg(ctx, tok.OrgID); err != nil {
			return gatehouse.Internal("share org", err)
		}
		g, cur, err := s.group(ctx, tx, tok, id)
		if err != nil {
			return err
		}
		res, err := change(s.renderGroup(g, cur))
		if err != nil {
			return err
		}
		in, err := absorbGroup(res)
		if err != nil {
			return err
		}
		meta := map[string]any{}
		if in.name != g.DisplayName {
			t, err := tx.TeamByID(ctx, tok.OrgID, g.TeamID)
			if err != nil {
				return gatehouse.Internal("find team", err)
			}
			meta["old_name"], meta["name"], t.Name, g.DisplayName = t.Name, in.name, in.name, in.name
			if err := tx.UpdateTeam(ctx, t); err != nil {
				return gatehouse.Internal("rename team", err)
			}
		}
		g.ExternalID, g.UpdatedAt = in.externalID, s.Now()
		if err := tx.UpdateGroup(ctx, g); err != nil {
			return gatehouse.Internal("update group", err)
		}
		ms, err := s.setMembers(ctx, tx, tok, g.TeamID, cur, in.members)
		if err != nil {
			return err
		}
		meta["members"] = len(ms)
		out = s.renderGroup(g, ms)
		return s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), "scim.group_updated", "team", g.TeamID, meta)
	})
	return out, err
}

// DeleteGroup deletes group id and its team.
func (s *Service) DeleteGroup(ctx context.Context, tok *Token, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		g, _, err := s.group(ctx, tx, tok, id)
		if err != nil {
			return err
		}
		if err := tx.SoftDeleteTeam(ctx, g.TeamID, s.Now()); err != nil {
			return gatehouse.Internal("delete team", err)
		}
		if err := tx.DeleteGroup(ctx, g.TeamID); err != nil {
			return gatehouse.Internal("delete group", err)
		}
		return s.ws.Audit(ctx, tx, tok.OrgID, actor(tok.ID), "scim.group_deleted", "team", g.TeamID, map[string]any{"name": g.DisplayName})
	})
}

// setMembers makes the group of team teamID hold the directory users
// want (from cur): each must be a user of tok's workspace's directory.
// Their accounts, when members of the workspace, move in and out of the
// team with them.
func (s *Service) setMembers(ctx context.Context, tx Store, tok *Token, teamID string, cur []DirUser, want []string) ([]DirUser, error) {
	had := map[string]DirUser{}
	for _, u := range cur {
		had[u.ID] = u
	}
	keep := map[string]bool{}
	var out []DirUser
	for _, id := range want {
		keep[id] = true
		if u, ok := had[id]; ok {
			out = append(out, u)
			continue
		}
		u, err := s.dirUser(ctx, tx, tok, id)
		if errors.Is(err, errUserNotFound) {
			return nil, invalid(CodeInvalidValue, "member %q is not a user of this directory", id)
		}
		if err != nil {
			return nil, err
		}
		if err := tx.AddGroupMember(ctx, teamID, id); err != nil {
			return nil, gatehouse.Internal("add group member", err)
		}
		if err := s.joinTeam(ctx, tx, tok, teamID, u); err != nil {
			return nil, err
		}
		out = append(out, *u)
	}
	for _, u := range cur {
		if keep[u.ID] {
			continue
		}
		if err := tx.RemoveGroupMember(ctx, teamID, u.ID); err != nil {
			return nil, gatehouse.Internal("remove group member", err)
		}
		if u.UserID != "" {
			if err := tx.RemoveTeamMember(ctx, teamID, u.UserID); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				return nil, gatehouse.Internal("remove team member", err)
			}
		}
	}
	return out, nil
}

// joinTeam puts u's account in team teamID when it is an active member of
// tok's workspace.
func (s *Service) joinTeam(ctx context.Context, tx Store, tok *Token, teamID string, u *DirUser) error {
	if u.UserID == "" || !u.Active {
		return nil
	}
	if _, err := tx.Member(ctx, tok.OrgID, u.UserID); errors.Is(err, gatehouse.ErrNotFound) {
		return nil
	} else if err != nil {
		return gatehouse.Internal("find member", err)
	}
	if err := tx.UpsertTeamMember(ctx, teamID, u.UserID, workspace.TeamMember, s.Now()); err != nil {
		return gatehouse.Internal("add team member", err)
	}
	return nil
}
