package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// orgLink is one workspace page the caller's role may open.
type orgLink struct{ Key, Label, Path string }

// orgLinks are the workspace pages org o's role may open, from the
// workspace's capabilities: members, teams and tools for everyone; the
// others for the roles holding their permission. A personal workspace has
// no invitations or workspace keys (the API's are for team workspaces).
func orgLinks(o *workspace.OrgListing) []orgLink {
	base := "/workspaces/" + o.ID
	links := []orgLink{{"overview", "Overview", base}, {"members", "Members", base + "/members"}}
	caps := o.Capabilities()
	add := func(ok bool, key, label string) {
		if ok {
			links = append(links, orgLink{key, label, base + "/" + key})
		}
	}
	add(caps.CanInTeam(workspace.PermMembers), "invitations", "Invitations")
	add(caps.Team, "teams", "Teams")
	add(true, "tools", "Tools")
	add(caps.CanInTeam(workspace.PermSettings), "keys", "Workspace API keys")
	add(caps.Can(workspace.PermDomains), "domains", "Domains")
	add(caps.CanInTeam(workspace.PermSettings), "applications", "Applications")
	add(caps.CanInTeam(workspace.PermSettings), "scim", "Provisioning")
	add(caps.CanInTeam(workspace.PermSettings), "sso", "Single sign-on")
	add(caps.Can(workspace.PermSettings), "audit", "Audit log")
	add(caps.CanInTeam(workspace.PermSettings), "settings", "Settings")
	return links
}

// overviewData is the workspace overview's data.
type overviewData struct {
	Org     workspace.OrgListing
	Profile *workspace.OrgProfile
	Links   []orgLink
	Here    string
}

// overviewPage is "GET /workspaces/{id}": the workspace's name, the
// caller's role, its counts and the pages the role may open.
func (h *handlers) overviewPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	prof, err := h.ws.OrgProfile(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	p := c.page(r, o.Name, "workspaces")
	p.Data = overviewData{Org: *o, Profile: prof, Links: orgLinks(o), Here: "overview"}
	return p, nil
}
