package sso

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Bounds of an attribute mapping.
const (
	maxAttributeName = 256
	maxGroupTeams    = 100
)

// AttributeMapping is what a connection reads of the identity provider's
// claims (OpenID Connect) or attributes (SAML) beyond the address: the
// person's name, and groups that decide their membership of teams of the
// connection's workspace. A group maps to a team only, never to a role.
type AttributeMapping struct {
	// Name is the claim or attribute of the display name; "": "name"
	// (OpenID Connect) or the usual name attributes (SAML).
	Name string `json:"name,omitempty"`
	// Groups is the claim or attribute listing the person's groups; "":
	// teams are left alone.
	Groups string `json:"groups,omitempty"`
	// GroupTeams map a group value to a team of the workspace.
	GroupTeams []GroupTeam `json:"group_teams,omitempty"`
}

// GroupTeam maps one group value to one team.
type GroupTeam struct {
	Group  string `json:"group"`
	TeamID string `json:"team_id"`
}

// checkMapping normalizes m: one-line names, at most maxGroupTeams
// distinct pairs, each team a live team of org orgID (a team of another
// workspace is refused).
func checkMapping(ctx context.Context, st Store, orgID string, m AttributeMapping) (AttributeMapping, error) {
	out := AttributeMapping{Name: strings.TrimSpace(m.Name), Groups: strings.TrimSpace(m.Groups), GroupTeams: []GroupTeam{}}
	for field, v := range map[string]string{"attribute_mapping.name": out.Name, "attribute_mapping.groups": out.Groups} {
		if len(v) > maxAttributeName || !gatehouse.OneLine(v) {
			return out, gatehouse.InvalidField(field, "%s must be one line of at most %d bytes", field, maxAttributeName)
		}
	}
	if len(m.GroupTeams) > maxGroupTeams {
		return out, gatehouse.InvalidField("attribute_mapping.group_teams", "attribute_mapping.group_teams may map at most %d groups", maxGroupTeams)
	}
	for _, gt := range m.GroupTeams {
		gt.Group = strings.TrimSpace(gt.Group)
		if gt.Group == "" || len(gt.Group) > maxAttributeName || !gatehouse.OneLine(gt.Group) {
			return out, gatehouse.InvalidField("attribute_mapping.group_teams", "each group must be one line of 1 to %d bytes", maxAttributeName)
		}
		if !gatehouse.IsID(gt.TeamID) {
			return out, errTeamNotHere(gt.TeamID)
		}
		if _, err := st.TeamByID(ctx, orgID, gt.TeamID); errors.Is(err, gatehouse.ErrNotFound) {
			return out, errTeamNotHere(gt.TeamID)
		} else if err != nil {
			return out, gatehouse.Internal("find team", err)
		}
		if !slices.Contains(out.GroupTeams, gt) {
			out.GroupTeams = append(out.GroupTeams, gt)
		}
	}
	if len(out.GroupTeams) > 0 && out.Groups == "" {
		return out, gatehouse.InvalidField("attribute_mapping.groups", "attribute_mapping.groups must name the claim or attribute of the groups that group_teams maps")
	}
	return out, nil
}

func errTeamNotHere(id string) error {
	return gatehouse.InvalidField("attribute_mapping.group_teams", "team %s is not a team of this workspace", clip(id))
}

// attributes are the claims or attributes of a sign-in, each as its
// string values.
type attributes map[string][]string

// first is the first value of name ("" when none).
func (a attributes) first(name string) string {
	if vs := a[name]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// claimAttributes are an ID token's claims as attributes: strings, lists
// of strings and other scalars by their text; objects are left out.
func claimAttributes(claims map[string]any) attributes {
	out := attributes{}
	for k, v := range claims {
		switch v := v.(type) {
		case string:
			out[k] = []string{v}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					out[k] = append(out[k], s)
				}
			}
		case bool, float64:
			out[k] = []string{fmt.Sprint(v)}
		}
	}
	return out
}

// mappedName is the name a sign-in gives: the mapping's attribute, else
// fallback (the protocol's usual one).
func (c *Connection) mappedName(attrs attributes, fallback string) string {
	if c.Mapping.Name != "" {
		return attrs.first(c.Mapping.Name)
	}
	return fallback
}

// applyAttributes brings the person u signing in through c in step with
// the provider: their name (when the provider sends a usable one) and
// their membership of the mapped teams (added to the teams of the groups
// they have, removed from the mapped teams of groups they no longer
// have; other teams untouched), in the sign-in's transaction; audited
// when something changed.
func (s *Service) applyAttributes(ctx context.Context, tx identity.Store, c *Connection, u *gatehouse.User, name string, attrs attributes) error {
	change := map[string]any{}
	name = strings.TrimSpace(name)
	if name != "" && name != u.Name && utf8.RuneCountInString(name) <= workspace.MaxName && gatehouse.CheckOneLine("name", name) == nil {
		u.Name, u.UpdatedAt = name, s.Now()
		if err := tx.UpdateUser(ctx, u); err != nil {
			return gatehouse.Internal("update name", err)
		}
		change["name"] = true
	}
	if c.Mapping.Groups != "" && len(c.Mapping.GroupTeams) > 0 {
		added, removed, err := s.syncTeams(ctx, tx, c, u.ID, attrs[c.Mapping.Groups])
		if err != nil {
			return err
		}
		if len(added) > 0 {
			change["teams_added"] = added
		}
		if len(removed) > 0 {
			change["teams_removed"] = removed
		}
	}
	if len(change) == 0 {
		return nil
	}
	change["sso_connection_id"] = c.ID
	return s.ws.Audit(ctx, tx, c.OrgID, u.ID, "sso.attributes_applied", "user", u.ID, change)
}

// syncTeams adds userID to the mapped teams of groups and removes them
// from the other mapped teams; it returns the teams it changed.
func (s *Service) syncTeams(ctx context.Context, tx identity.Store, c *Connection, userID string, groups []string) (added, removed []string, err error) {
	var teams []string
	want := map[string]bool{}
	for _, gt := range c.Mapping.GroupTeams {
		if !slices.Contains(teams, gt.TeamID) {
			teams = append(teams, gt.TeamID)
		}
		if slices.Contains(groups, gt.Group) {
			want[gt.TeamID] = true
		}
	}
	for _, team := range teams {
		if _, err := tx.TeamByID(ctx, c.OrgID, team); errors.Is(err, gatehouse.ErrNotFound) {
			continue // deleted since
		} else if err != nil {
			return nil, nil, gatehouse.Internal("find team", err)
		}
		_, err := tx.TeamRole(ctx, team, userID)
		in := err == nil
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return nil, nil, gatehouse.Internal("team role", err)
		}
		switch {
		case want[team] && !in:
			if err := tx.UpsertTeamMember(ctx, team, userID, workspace.TeamMember, s.Now()); err != nil {
				return nil, nil, gatehouse.Internal("add team member", err)
			}
			added = append(added, team)
		case !want[team] && in:
			if err := tx.RemoveTeamMember(ctx, team, userID); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				return nil, nil, gatehouse.Internal("remove team member", err)
			}
			removed = append(removed, team)
		}
	}
	return added, removed, nil
}
