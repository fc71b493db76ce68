package pages

import (
	"net/http"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "created", Text: "Workspace created."},
	{Key: "default", Text: "Default workspace changed."},
	{Key: "left", Text: "You left the workspace.", Named: "You left %s."},
}.add()

// workspacesPage is "GET /account/workspaces": c's memberships and default.
func (h *handlers) workspacesPage(r *http.Request, c *caller) (*page, error) {
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		return nil, err
	}
	p := c.page(r, "Workspaces", "workspaces")
	p.Data = homeData{Orgs: orgs, DefaultID: def}
	return p, nil
}

// handleCreateWorkspace handles "POST /account/workspaces": a team
// workspace the caller owns, made the default only when the person ticks
// "as_default" (the default never changes without their asking).
func (h *handlers) handleCreateWorkspace(w http.ResponseWriter, r *http.Request, c *caller) error {
	name := r.PostFormValue("name")
	if _, _, err := h.ws.CreateOrg(r.Context(), c.p, name, r.PostFormValue("as_default") == "yes"); err != nil {
		return h.workspaceRefused(r, c, err, map[string]string{"name": name, "as_default": r.PostFormValue("as_default")}, "name")
	}
	done(w, r, "/account/workspaces", "created")
	return nil
}

// workspaceRefused shows the workspaces page again with a refusal.
func (h *handlers) workspaceRefused(r *http.Request, c *caller, err error, values map[string]string, fields ...string) error {
	p, perr := h.workspacesPage(r, c)
	if perr != nil {
		return perr
	}
	p.Notice = ""
	return refused("workspaces", p, err, values, fields...)
}

// handleSwitchDefault handles "POST /account/workspaces/default": the
// workspace sign-ins and this console start in.
func (h *handlers) handleSwitchDefault(w http.ResponseWriter, r *http.Request, c *caller) error {
	if _, err := h.svc.SwitchOrg(r.Context(), c.p, r.PostFormValue("org_id")); err != nil {
		return h.workspaceRefused(r, c, err, nil)
	}
	done(w, r, "/account/workspaces", "default")
	return nil
}

// handleLeave handles "POST /account/workspaces/leave"; the workspace's
// rules (the last owner stays) are the service's.
func (h *handlers) handleLeave(w http.ResponseWriter, r *http.Request, c *caller) error {
	orgID := r.PostFormValue("org_id")
	o, err := h.orgOf(r, c, orgID)
	if err != nil {
		return h.workspaceRefused(r, c, err, nil)
	}
	if !h.confirmed(w, r, c, "workspaces", confirmStep{Title: tr(r, "Leave %s", o.Name) + "?",
		Message: tr(r, "You lose access to %s and everything in it. To come back, someone in it has to invite you again.", o.Name),
		Button:  tr(r, "Leave %s", o.Name), Back: "/account/workspaces"}) {
		return nil
	}
	if err := h.ws.RemoveMember(r.Context(), c.p, orgID, c.p.UserID); err != nil {
		return h.workspaceRefused(r, c, err, nil)
	}
	h.doneNamed(w, r, "/account/workspaces", "left", o.Name)
	return nil
}
