package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// toolsData is the tools page's data.
type toolsData struct {
	Org       workspace.OrgListing
	Tools     []workspace.ToolRow
	CanSwitch bool // from the workspace's role table (org.tools.manage)
	Links     []orgLink
	Here      string
}

// handleToolsPage handles "GET /workspaces/{id}/tools": which tools the
// workspace has on, with a switch each for the roles that may change them.
func (h *handlers) handleToolsPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	o, err := h.orgOf(r, c, id)
	var rows []workspace.ToolRow
	if err == nil {
		rows, err = h.ws.ToolMatrix(r.Context(), c.p, id)
	}
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	p := c.page(r, tr(r, "%s: tools", o.Name), "workspaces")
	p.Data = toolsData{Org: *o, Tools: rows, CanSwitch: o.Kind == workspace.OrgTeam && workspace.RoleHas(o.Role, workspace.PermTools),
		Links: orgLinks(o), Here: "tools"}
	h.render(w, r, http.StatusOK, "tools", p)
}

// handleSetTool handles "POST /workspaces/{id}/tools": tool and enabled
// (true or false); the workspace decides who may (403).
func (h *handlers) handleSetTool(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	var enabled *bool
	switch r.PostFormValue("enabled") {
	case "true":
		enabled = new(true)
	case "false":
		enabled = new(false)
	}
	if _, err := h.ws.SetTool(r.Context(), c.p, id, r.PostFormValue("tool"), enabled); err != nil {
		h.pageError(w, r, err)
		return
	}
	done(w, r, "/workspaces/"+id+"/tools", "tool")
}
