package workspace

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse"
)

var errTeamNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "team not found")

// Teams lists an org's live teams; a personal org has none.
func (s *Service) Teams(ctx context.Context, p *gatehouse.Principal, orgID string) ([]Team, error) {
	a, err := s.orgAccess(ctx, s.store, p, orgID)
	if err != nil {
		return nil, err
	}
	if a.org.Kind != OrgTeam {
		return []Team{}, nil
	}
	ts, err := s.store.ListTeams(ctx, orgID, p.UserID)
	if err != nil {
		return nil, gatehouse.Internal("list teams", err)
	}
	return ts, nil
}

// TeamPatch is a team's name and description; nil fields are left alone.
type TeamPatch struct {
	Name        *string
	Description *string
}

func checkDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	if len([]rune(d)) > 2000 {
		return "", gatehouse.InvalidField("description", "description must be at most 2000 characters")
	}
	return d, nil
}

// CreateTeam creates a team in a team org; any member may, and becomes its lead.
func (s *Service) CreateTeam(ctx context.Context, p *gatehouse.Principal, orgID string, in TeamPatch) (*Team, error) {
	var t *Team
	err := s.store.Tx(ctx, func(tx Store) error {
		a, err := s.authorize(ctx, tx, p, orgID, "", true)
		if err != nil {
			return err
		}
		if err := a.person(); err != nil {
			return err
		}
		name := ""
		if in.Name != nil {
			name = *in.Name
		}
		if name, err = CheckName("name", name); err != nil {
			return err
		}
		desc := ""
		if in.Description != nil {
			if desc, err = checkDescription(*in.Description); err != nil {
				return err
			}
		}
		now := s.Now()
		t = &Team{ID: gatehouse.NewID(), OrgID: orgID, Name: name, Description: desc, CreatedAt: now, MemberCount: 1, MyRole: TeamLead}
		if err := tx.CreateTeam(ctx, t); err != nil {
			return gatehouse.Internal("create team", err)
		}
		if err := tx.UpsertTeamMember(ctx, t.ID, p.UserID, TeamLead, now); err != nil {
			return gatehouse.Internal("add team lead", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "team.created", "team", t.ID, map[string]any{"name": name})
	})
	return t, err
}

// teamAccess resolves the caller's access to a live team of a team org and
// checks that they lead it or hold org.teams.manage, unless self allows
// the caller to act on their own membership.
func (s *Service) teamAccess(ctx context.Context, st Tables, p *gatehouse.Principal, orgID, teamID string, manage bool) (*access, *Team, error) {
	a, err := s.authorize(ctx, st, p, orgID, "", true)
	if err != nil {
		return nil, nil, err
	}
	if !gatehouse.IsID(teamID) {
		return nil, nil, errTeamNotFound
	}
	t, err := st.TeamByID(ctx, orgID, teamID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, errTeamNotFound
	}
	if err != nil {
		return nil, nil, gatehouse.Internal("find team", err)
	}
	if caps := a.capabilities(); manage && !caps.Can(PermTeams) {
		role, err := st.TeamRole(ctx, teamID, p.UserID)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return nil, nil, gatehouse.Internal("team role", err)
		}
		if !caps.ManageTeam(role) {
			return nil, nil, gatehouse.Errorf(gatehouse.KindForbidden, "only the team's lead or a holder of %s may do this", PermTeams)
		}
	}
	return a, t, nil
}

// UpdateTeam renames a team or changes its description.
func (s *Service) UpdateTeam(ctx context.Context, p *gatehouse.Principal, orgID, teamID string, in TeamPatch) error {
	return s.store.Tx(ctx, func(tx Store) error {
		_, t, err := s.teamAccess(ctx, tx, p, orgID, teamID, true)
		if err != nil {
			return err
		}
		before := map[string]any{}
		after := map[string]any{}
		if in.Name != nil {
			name, err := CheckName("name", *in.Name)
			if err != nil {
				return err
			}
			if name != t.Name {
				before["name"], after["name"], t.Name = t.Name, name, name
			}
		}
		if in.Description != nil {
			d, err := checkDescription(*in.Description)
			if err != nil {
				return err
			}
			if d != t.Description {
				before["description"], after["description"], t.Description = t.Description, d, d
			}
		}
		if in.Name == nil && in.Description == nil {
			return gatehouse.Invalid("nothing to update: give name or description")
		}
		if len(after) == 0 {
			return nil
		}
		if err := tx.UpdateTeam(ctx, t); errors.Is(err, gatehouse.ErrNotFound) {
			return errTeamNotFound // deleted meanwhile
		} else if err != nil {
			return gatehouse.Internal("update team", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "team.updated", "team", t.ID, map[string]any{"before": before, "after": after})
	})
}

// DeleteTeam soft-deletes a team.
func (s *Service) DeleteTeam(ctx context.Context, p *gatehouse.Principal, orgID, teamID string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		_, t, err := s.teamAccess(ctx, tx, p, orgID, teamID, true)
		if err != nil {
			return err
		}
		if err := tx.SoftDeleteTeam(ctx, t.ID, s.Now()); err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) {
				return errTeamNotFound
			}
			return gatehouse.Internal("delete team", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "team.deleted", "team", t.ID, map[string]any{"name": t.Name})
	})
}

// TeamMembers lists a team's members; any org member may look.
func (s *Service) TeamMembers(ctx context.Context, p *gatehouse.Principal, orgID, teamID string) ([]PersonRow, error) {
	if _, err := s.orgAccess(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	if !gatehouse.IsID(teamID) {
		return nil, errTeamNotFound
	}
	if _, err := s.store.TeamByID(ctx, orgID, teamID); errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errTeamNotFound
	} else if err != nil {
		return nil, gatehouse.Internal("find team", err)
	}
	rows, err := s.store.TeamMembers(ctx, teamID)
	if err != nil {
		return nil, gatehouse.Internal("team members", err)
	}
	return rows, nil
}

// SetTeamMember adds an org member to a team or changes their team role.
func (s *Service) SetTeamMember(ctx context.Context, p *gatehouse.Principal, orgID, teamID, userID, role string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		_, t, err := s.teamAccess(ctx, tx, p, orgID, teamID, true)
		if err != nil {
			return err
		}
		if t.Managed {
			return ErrManagedTeam
		}
		if role == "" {
			role = TeamMember
		}
		if role != TeamLead && role != TeamMember {
			return gatehouse.InvalidField("role", "role must be lead or member")
		}
		if userID == "" {
			return gatehouse.Invalid("user_id is required")
		}
		if !gatehouse.IsID(userID) {
			return gatehouse.Invalid("user_id is not a member of this organization")
		}
		if _, err := tx.Member(ctx, orgID, userID); errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Invalid("user_id is not a member of this organization")
		} else if err != nil {
			return gatehouse.Internal("membership", err)
		}
		old, err := tx.TeamRole(ctx, t.ID, userID)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Internal("team role", err)
		}
		if old == role {
			return nil
		}
		if err := tx.UpsertTeamMember(ctx, t.ID, userID, role, s.Now()); err != nil {
			return gatehouse.Internal("set team member", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "team.member_set", "user", userID, map[string]any{"team_id": t.ID, "old_role": old, "new_role": role})
	})
}

// RemoveTeamMember takes someone off a team; anyone may take themselves off.
func (s *Service) RemoveTeamMember(ctx context.Context, p *gatehouse.Principal, orgID, teamID, userID string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		_, t, err := s.teamAccess(ctx, tx, p, orgID, teamID, userID != p.UserID)
		if err != nil {
			return err
		}
		if t.Managed {
			return ErrManagedTeam
		}
		if !gatehouse.IsID(userID) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "not a member of this team")
		}
		if err := tx.RemoveTeamMember(ctx, t.ID, userID); errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "not a member of this team")
		} else if err != nil {
			return gatehouse.Internal("remove team member", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "team.member_removed", "user", userID, map[string]any{"team_id": t.ID})
	})
}

// ToolRow is one row of the tool matrix.
type ToolRow struct {
	Tool    string
	Enabled bool
}

func (s *Service) toolMatrix(ctx context.Context, st Tables, orgID string) ([]ToolRow, error) {
	states, err := st.ToolStates(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("tool states", err)
	}
	rows := make([]ToolRow, len(Tools))
	for i, t := range Tools {
		rows[i] = ToolRow{Tool: t, Enabled: toolOn(states, t)}
	}
	return rows, nil
}

// ToolMatrix returns the seven tools of an org in canonical order.
func (s *Service) ToolMatrix(ctx context.Context, p *gatehouse.Principal, orgID string) ([]ToolRow, error) {
	if _, err := s.orgAccess(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	return s.toolMatrix(ctx, s.store, orgID)
}

// SetTool enables or disables one tool of a team org and returns the matrix.
// Tokens minted afterwards carry the new tool list.
func (s *Service) SetTool(ctx context.Context, p *gatehouse.Principal, orgID, tool string, enabled *bool) ([]ToolRow, error) {
	var rows []ToolRow
	err := s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.authorize(ctx, tx, p, orgID, PermTools, true); err != nil {
			return err
		}
		if tool == "" {
			return gatehouse.InvalidField("tool", "tool is required")
		}
		if !IsTool(tool) {
			return gatehouse.InvalidField("tool", "unknown tool %q: tools are %s", tool, strings.Join(Tools, ", "))
		}
		if enabled == nil {
			return gatehouse.Invalid("enabled is required")
		}
		before, err := s.toolMatrix(ctx, tx, orgID)
		if err != nil {
			return err
		}
		was := false
		for _, r := range before {
			if r.Tool == tool {
				was = r.Enabled
			}
		}
		if err := tx.SetTool(ctx, orgID, tool, *enabled); err != nil {
			return gatehouse.Internal("set tool", err)
		}
		if was != *enabled {
			verb := "disabled"
			if *enabled {
				verb = "enabled"
			}
			if err := s.Audit(ctx, tx, orgID, p.UserID, "tool."+verb, "tool", tool, map[string]any{"tool": tool, "enabled": *enabled}); err != nil {
				return err
			}
		}
		rows, err = s.toolMatrix(ctx, tx, orgID)
		return err
	})
	return rows, err
}

// ErrManagedTeam refuses a hand edit of a managed team's membership.
var ErrManagedTeam = gatehouse.Errorf(gatehouse.KindConflict,
	"this team is managed by the workspace's directory (SCIM): change its members in the directory, which keeps them here").WithCode(CodeManagedTeam)

// CodeManagedTeam is the code of ErrManagedTeam.
const CodeManagedTeam = "managed_team"
