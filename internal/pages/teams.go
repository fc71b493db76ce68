package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "team-created", Text: "Team created."},
	{Key: "team-deleted", Text: "Team deleted.", Named: "The team %s was deleted."},
	{Key: "team-member", Text: "Team member saved."},
	{Key: "team-removed", Text: "Taken off the team."},
	{Key: "team-saved", Text: "Team saved."},
}.add()

// teamRow is one team as the teams page lists it, with whether the caller
// may manage it (the workspace's ManageTeam capability).
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

// teamsPage is "GET /workspaces/{id}/teams": the workspace's teams, with
// what the caller may do to each (the workspace's capabilities, not
// decided here); any member may create one (and leads it).
func (h *handlers) teamsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	ts, err := h.ws.Teams(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	d := teamsData{Org: *o, Links: orgLinks(o), Here: "teams"}
	caps := o.Capabilities()
	for _, t := range ts {
		d.Teams = append(d.Teams, teamRow{Team: t, CanManage: caps.ManageTeam(t.MyRole)})
	}
	p := c.page(r, tr(r, "%s: teams", o.Name), "workspaces")
	p.Data = d
	return p, nil
}

// teamForm is a team's name and description, as the create and edit forms
// send them.
type teamForm struct{ Name, Description string }

func parseTeamForm(r *http.Request) teamForm {
	return teamForm{Name: r.PostFormValue("name"), Description: r.PostFormValue("description")}
}

func (f teamForm) patch() workspace.TeamPatch {
	return workspace.TeamPatch{Name: &f.Name, Description: &f.Description}
}

func (f teamForm) values() map[string]string {
	return map[string]string{"name": f.Name, "description": f.Description}
}

// handleCreateTeam handles "POST /workspaces/{id}/teams": name and description.
func (h *handlers) handleCreateTeam(w http.ResponseWriter, r *http.Request, c *caller) error {
	f := parseTeamForm(r)
	t, err := h.ws.CreateTeam(r.Context(), c.p, r.PathValue("id"), f.patch())
	if err != nil {
		return h.refusedIn(r, c, "teams", h.teamsPage, err, f.values(), "name", "description")
	}
	done(w, r, "/workspaces/"+r.PathValue("id")+"/teams/"+t.ID, "team-created")
	return nil
}

// handleDeleteTeam handles "POST /workspaces/{id}/teams/delete"; the
// service decides who may (403).
func (h *handlers) handleDeleteTeam(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, teamID := r.PathValue("id"), r.PostFormValue("team_id")
	teams, err := h.ws.Teams(r.Context(), c.p, id)
	if err != nil {
		return err
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
		return nil
	}
	if err := h.ws.DeleteTeam(r.Context(), c.p, id, teamID); err != nil {
		return err
	}
	h.doneNamed(w, r, "/workspaces/"+id+"/teams", "team-deleted", name)
	return nil
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

// teamPage is "GET /workspaces/{id}/teams/{team}": the team of the path in
// workspace o, its members and, for its managers, its forms.
func (h *handlers) teamPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
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
		return nil, err
	}
	p := c.page(r, o.Name+": "+t.Name, "workspaces")
	p.Values = teamForm{Name: t.Name, Description: t.Description}.values()
	p.Data = teamData{Org: *o, Links: orgLinks(o), Here: "teams", Team: *t, Members: ms, CanManage: o.Capabilities().ManageTeam(t.MyRole), Self: c.b.User.ID}
	return p, nil
}

// handleTeamMember handles "POST /workspaces/{id}/teams/{team}/members":
// a member's email address and the team role; SetTeamMember decides who may
// (403) and that they are in the workspace (400).
func (h *handlers) handleTeamMember(w http.ResponseWriter, r *http.Request, c *caller) error {
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
		return h.refusedIn(r, c, "team", h.teamPage, err, map[string]string{"email": email, "role": r.PostFormValue("role")}, "email", "role")
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-member")
	return nil
}

// handleUpdateTeam handles "POST /workspaces/{id}/teams/{team}": name and
// description; UpdateTeam decides who may (403) and what is valid (400).
func (h *handlers) handleUpdateTeam(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, team := r.PathValue("id"), r.PathValue("team")
	f := parseTeamForm(r)
	if err := h.ws.UpdateTeam(r.Context(), c.p, id, team, f.patch()); err != nil {
		return h.refusedIn(r, c, "team", h.teamPage, err, f.values(), "name", "description")
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-saved")
	return nil
}

// handleTeamRemove handles "POST /workspaces/{id}/teams/{team}/remove".
func (h *handlers) handleTeamRemove(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, team := r.PathValue("id"), r.PathValue("team")
	if err := h.ws.RemoveTeamMember(r.Context(), c.p, id, team, r.PostFormValue("user_id")); err != nil {
		return err
	}
	done(w, r, "/workspaces/"+id+"/teams/"+team, "team-removed")
	return nil
}
