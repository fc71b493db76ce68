package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "tool", Text: "Tool switched."},
}.add()

// toolsData is the tools page's data.
type toolsData struct {
	Org       workspace.OrgListing
	Tools     []workspace.ToolRow
	CanSwitch bool // the workspace's capability (org.tools.manage, a team workspace)
	Links     []orgLink
	Here      string
}

// toolsPage is "GET /workspaces/{id}/tools": which tools the workspace
// has on, with a switch each for the roles that may change them.
func (h *handlers) toolsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	rows, err := h.ws.ToolMatrix(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	p := c.page(r, tr(r, "%s: tools", o.Name), "workspaces")
	p.Data = toolsData{Org: *o, Tools: rows, CanSwitch: o.Capabilities().CanInTeam(workspace.PermTools), Links: orgLinks(o), Here: "tools"}
	return p, nil
}

// handleSetTool handles "POST /workspaces/{id}/tools": tool and enabled
// (true or false); the workspace decides who may (403).
func (h *handlers) handleSetTool(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	var enabled *bool
	switch r.PostFormValue("enabled") {
	case "true":
		enabled = new(true)
	case "false":
		enabled = new(false)
	}
	if _, err := h.ws.SetTool(r.Context(), c.p, id, r.PostFormValue("tool"), enabled); err != nil {
		return err
	}
	done(w, r, "/workspaces/"+id+"/tools", "tool")
	return nil
}
