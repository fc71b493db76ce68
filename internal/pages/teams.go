package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// teamRow is one team as the teams page lists it, with whether the caller
// may manage it (org.teams.manage or the team's lead, as the service decides).
type teamRow struct {
	workspace.Team
	CanManage bool
}

// teamsData is the teams page's data.
type teamsData struct {
	Org   workspace.OrgListing
	Links []orgLink
	Here  string
	Teams []teamRow
}

// handleTeamsPage handles "GET /workspaces/{id}/teams": the workspace's
// teams; any member may create one (and leads it).
func (h *handlers) handleTeamsPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if p, ok := h.teamsPage(w, r, c); ok {
		h.render(w, r, http.StatusOK, "teams", p)
	}
}

func (h *handlers) teamsPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	o := h.orgPage(w, r, c)
	if o == nil {
		return nil, false
	}
	ts, err := h.ws.Teams(r.Context(), c.p, o.ID)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	d := teamsData{Org: *o, Links: orgLinks(o), Here: "teams"}
	for _, t := range ts {
		d.Teams = append(d.Teams, teamRow{Team: t, CanManage: canManageTeam(o.Role, t.MyRole)})
	}
	p := c.page(r, tr(r, "%s: teams", o.Name), "workspaces")
	p.Data = d
	return p, true
}

// canManageTeam is the service's rule for team changes (teamAccess): the
// org's org.teams.manage, or leading the team.
func canManageTeam(orgRole, teamRole string) bool {
	return workspace.RoleHas(orgRole, workspace.PermTeams) || teamRole == workspace.TeamLead
}

// handleCreateTeam handles "POST /workspaces/{id}/teams": name and description.
func (h *handlers) handleCreateTeam(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	name, desc := r.PostFormValue("name"), r.PostFormValue("description")
	t, err := h.ws.CreateTeam(r.Context(), c.p, r.PathValue("id"), workspace.TeamPatch{Name: &name, Description: &desc})
	if err != nil {
		if p, ok := h.teamsPage(w, asGet(r), c); ok {
			h.refuse(w, r, "teams", p, err, map[string]string{"name": name, "description": desc}, "name", "description")
		}
		return
	}
	done(w, r, "/workspaces/"+r.PathValue("id")+"/teams/"+t.ID, "team-created")
}

// handleDeleteTeam handles "POST /workspaces/{id}/teams/delete"; the
// service decides who may (403).
func (h *handlers) handleDeleteTeam(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, teamID := r.PathValue("id"), r.PostFormValue("team_id")
	teams, err := h.ws.Teams(r.Context(), c.p, id)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	name := "this team"
	for _, tm := range teams {
		if tm.ID == teamID {
			name = "“" + tm.Name + "”"
		}
	}
	if !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Delete the team %s?", name),
		Message: tr(r, "The team %s and its member list are deleted; its members stay in the workspace.", name),
		Button:  tr(r, "Delete %s", name), Back: "/workspaces/" + id + "/teams"}) {
		return
	}
	if err := h.ws.DeleteTeam(r.Context(), c.p, id, teamID); err != nil {
		h.pageError(w, r, err)
		return
	}
	h.doneNamed(w, r, "/workspaces/"+id+"/teams", "team-deleted", name)
}

// teamData is a team page's data.
type teamData struct {
	Org       workspace.OrgListing
	Links     []orgLink
	Here      string
	Team      workspace.Team
	Members   []workspace.PersonRow
	CanManage bool
	Self      string
}

// teamPage builds the page of team tid in the caller's workspace.
func (h *handlers) teamPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	o := h.orgPage(w, r, c)
	if o == nil {
		return nil, false
	}
	ts, err := h.ws.Teams(r.Context(), c.p, o.ID)
	var t *workspace.Team
	for i := range ts {
		if ts[i].ID == r.PathValue("team") {
			t = &ts[i]
		}
	}
	if err == nil && t == nil {
		err = gatehouse.Errorf(gatehouse.KindNotFound, "team not found")
	}
	var ms []workspace.PersonRow
	if err == nil {
		ms, err = h.ws.TeamMembers(r.Context(), c.p, o.ID, t.ID)
	}
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	p := c.page(r, o.Name+": "+t.Name, "workspaces")
	p.Values = map[string]string{"name": t.Name, "description": t.Description}
	p.Data = teamData{Org: *o, Links: orgLinks(o), Here: "teams", Team: *t, Members: ms, CanManage: canManageTeam(o.Role, t.MyRole), Self: c.b.User.ID}
	return p, true
}

// handleTeamPage handles "GET /workspaces/{id}/teams/{team}".
func (h *handlers) handleTeamPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if p, ok := h.teamPage(w, r, c); ok {
		h.render(w, r, http.StatusOK, "team", p)
	}
}

// handleTeamMember handles "POST /workspaces/{id}/teams/{team}/members":
// a member's email address and the team role; SetTeamMember decides who may
// (403) and that they are in the workspace (400).
func (h *handlers) handleTeamMember(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, team, email := r.PathValue("id"), r.PathValue("team"), strings.TrimSpace(r.PostFormValue("email"))
	userID := r.PostFormValue("user_id")
	var err error
	if userID == "" {
		userID, err = h.ws.MemberByEmail(r.Context(), c.p, id, email)
	}
	if err == nil {
		err = h.ws.SetTeamMember(r.Context(), c.p, id, team, userID, r.PostFormValue("role"))
	}
	if err != nil {
		if p, ok := h.teamPage(w, asGet(r), c); ok {
			h.refuse(w, r, "team", p, err, map[string]string{"email": email, "role": r.PostFormValue("role")}, "email", "role")
		}
		return
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-member")
}

// handleUpdateTeam handles "POST /workspaces/{id}/teams/{team}": name and
// description; UpdateTeam decides who may (403) and what is valid (400).
func (h *handlers) handleUpdateTeam(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, team := r.PathValue("id"), r.PathValue("team")
	name, desc := r.PostFormValue("name"), r.PostFormValue("description")
	if err := h.ws.UpdateTeam(r.Context(), c.p, id, team, workspace.TeamPatch{Name: &name, Description: &desc}); err != nil {
		if p, ok := h.teamPage(w, asGet(r), c); ok {
			h.refuse(w, r, "team", p, err, map[string]string{"name": name, "description": desc}, "name", "description")
		}
		return
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-saved")
}

// handleTeamRemove handles "POST /workspaces/{id}/teams/{team}/remove".
func (h *handlers) handleTeamRemove(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, team := r.PathValue("id"), r.PathValue("team")
	if err := h.ws.RemoveTeamMember(r.Context(), c.p, id, team, r.PostFormValue("user_id")); err != nil {
		h.pageError(w, r, err)
		return
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-removed")
}
