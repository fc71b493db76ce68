package pages

import (
	"net/http"
)

// workspacesPage is the workspaces page of c: its memberships and default.
func (h *handlers) workspacesPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	p := c.page(r, "Workspaces", "workspaces")
	p.Data = homeData{Orgs: orgs, DefaultID: def}
	return p, true
}

// handleWorkspacesPage handles "GET /account/workspaces".
func (h *handlers) handleWorkspacesPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if p, ok := h.workspacesPage(w, r, c); ok {
		h.render(w, r, http.StatusOK, "workspaces", p)
	}
}

// handleCreateWorkspace handles "POST /account/workspaces": a team
// workspace the caller owns, made the default only when the person ticks
// "as_default" (the default never changes without their asking).
func (h *handlers) handleCreateWorkspace(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	name := r.PostFormValue("name")
	if _, _, err := h.ws.CreateOrg(r.Context(), c.p, name, r.PostFormValue("as_default") == "yes"); err != nil {
		h.workspaceRefused(w, r, c, err, map[string]string{"name": name, "as_default": r.PostFormValue("as_default")}, "name")
		return
	}
	done(w, r, "/account/workspaces", "created")
}

// workspaceRefused shows the workspaces page again with a refusal.
func (h *handlers) workspaceRefused(w http.ResponseWriter, r *http.Request, c *caller, err error, values map[string]string, fields ...string) {
	if p, ok := h.workspacesPage(w, r, c); ok {
		p.Notice = ""
		h.refuse(w, r, "workspaces", p, err, values, fields...)
	}
}

// handleSwitchDefault handles "POST /account/workspaces/default": the
// workspace sign-ins and this console start in.
func (h *handlers) handleSwitchDefault(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if _, err := h.svc.SwitchOrg(r.Context(), c.p, r.PostFormValue("org_id")); err != nil {
		h.workspaceRefused(w, r, c, err, nil)
		return
	}
	done(w, r, "/account/workspaces", "default")
}

// handleLeave handles "POST /account/workspaces/leave"; the workspace's
// rules (the last owner stays) are the service's.
func (h *handlers) handleLeave(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	orgID := r.PostFormValue("org_id")
	o, err := h.orgOf(r, c, orgID)
	if err != nil {
		h.workspaceRefused(w, r, c, err, nil)
		return
	}
	if !h.confirmed(w, r, c, "workspaces", confirmStep{Title: tr(r, "Leave %s", o.Name) + "?",
		Message: tr(r, "You lose access to %s and everything in it. To come back, someone in it has to invite you again.", o.Name),
		Button:  tr(r, "Leave %s", o.Name), Back: "/account/workspaces"}) {
		return
	}
	if err := h.ws.RemoveMember(r.Context(), c.p, orgID, c.p.UserID); err != nil {
		h.workspaceRefused(w, r, c, err, nil)
		return
	}
	h.doneNamed(w, r, "/account/workspaces", "left", o.Name)
}
