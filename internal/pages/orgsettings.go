package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// orgSettingsData is the workspace settings page's data.
type orgSettingsData struct {
	Org       workspace.OrgListing
	Links     []orgLink
	Here      string
	CanDelete bool // from the role table (org.delete)
}

// orgSettingsPage is the settings page of the caller's workspace; the roles
// without org.settings.manage get the service's 403 (not a form they cannot
// use), a personal workspace the service's 400.
func (h *handlers) orgSettingsPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	o := h.orgPage(w, r, c)
	if o == nil {
		return nil, false
	}
	if !workspace.RoleHas(o.Role, workspace.PermSettings) || o.Kind != workspace.OrgTeam {
		_, err := h.ws.UpdateOrg(r.Context(), c.p, o.ID, workspace.OrgPatch{})
		h.pageError(w, r, err)
		return nil, false
	}
	// The listing leaves out the policy; the profile has it.
	prof, err := h.ws.OrgProfile(r.Context(), c.p, o.ID)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	o.RequireMFA = prof.Org.RequireMFA
	p := c.page(r, tr(r, "%s: settings", o.Name), "workspaces")
	p.Data = orgSettingsData{Org: *o, Links: orgLinks(o), Here: "settings", CanDelete: workspace.RoleHas(o.Role, workspace.PermDelete)}
	p.Values = map[string]string{"name": o.Name, "slug": o.Slug, "avatar_url": o.AvatarURL}
	return p, true
}

// handleOrgSettingsPage handles "GET /workspaces/{id}/settings".
func (h *handlers) handleOrgSettingsPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if p, ok := h.orgSettingsPage(w, r, c); ok {
		h.render(w, r, http.StatusOK, "orgsettings", p)
	}
}

// handleOrgSettings handles "POST /workspaces/{id}/settings": name, slug
// and avatar_url; UpdateOrg decides who may (403) and what is valid (400, 409).
func (h *handlers) handleOrgSettings(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	o, err := h.orgOf(r, c, id)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	// Only the fields that differ are sent, so an unchanged form is saved
	// as it is; an empty patch still asks UpdateOrg, which refuses (403)
	// the roles that may not change settings.
	values := map[string]string{"name": r.PostFormValue("name"), "slug": r.PostFormValue("slug"), "avatar_url": r.PostFormValue("avatar_url")}
	var patch workspace.OrgPatch
	changed := func(v, cur string) *string {
		if strings.TrimSpace(v) == cur {
			return nil
		}
		return new(v)
	}
	patch.Name, patch.Slug, patch.AvatarURL = changed(values["name"], o.Name), changed(values["slug"], o.Slug), changed(values["avatar_url"], o.AvatarURL)
	if patch.Name != nil || patch.Slug != nil || patch.AvatarURL != nil || !workspace.RoleHas(o.Role, workspace.PermSettings) || o.Kind != workspace.OrgTeam {
		_, err = h.ws.UpdateOrg(r.Context(), c.p, id, patch)
	}
	if err != nil {
		h.orgSettingsRefused(w, r, c, err, values, "name", "slug", "avatar_url")
		return
	}
	done(w, r, "/workspaces/"+id+"/settings", "org-saved")
}

// handleOrgTwoFactor handles "POST /workspaces/{id}/settings/two-factor":
// the switch "require two-factor sign-in" (require=on or off); UpdateOrg
// decides who may (403) and refuses turning it on from a session without
// a second factor, which would lock the caller out.
func (h *handlers) handleOrgTwoFactor(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, on := r.PathValue("id"), r.PostFormValue("require") == "on"
	if _, err := h.ws.UpdateOrg(r.Context(), c.p, id, workspace.OrgPatch{RequireMFA: &on}); err != nil {
		h.orgSettingsRefused(w, r, c, err, nil, "require_mfa")
		return
	}
	key := "org-mfa-off"
	if on {
		key = "org-mfa-on"
	}
	done(w, r, "/workspaces/"+id+"/settings", key)
}

// handleOrgDelete handles "POST /workspaces/{id}/delete": the workspace's
// name typed as confirmation; DeleteOrg decides who may (403).
func (h *handlers) handleOrgDelete(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	o, err := h.orgOf(r, c, id)
	if err == nil && strings.TrimSpace(r.PostFormValue("confirm")) != o.Name && workspace.RoleHas(o.Role, workspace.PermDelete) {
		err = gatehouse.InvalidField("confirm", "confirmation must be the workspace's name, typed exactly")
	}
	if err == nil {
		err = h.ws.DeleteOrg(r.Context(), c.p, id)
	}
	if err != nil {
		h.orgSettingsRefused(w, r, c, err, map[string]string{"confirm": r.PostFormValue("confirm")}, "confirm")
		return
	}
	done(w, r, "/account/workspaces", "org-deleted")
}

// orgSettingsRefused shows the settings page again with the refusal next to
// its field; a 403 or 404 of the workspace itself is the error page.
func (h *handlers) orgSettingsRefused(w http.ResponseWriter, r *http.Request, c *caller, err error, values map[string]string, fields ...string) {
	var e *gatehouse.Error
	if !errors.As(err, &e) || (e.Kind == gatehouse.KindForbidden && e.Field == "") || e.Kind == gatehouse.KindNotFound {
		h.pageError(w, r, err)
		return
	}
	if p, ok := h.orgSettingsPage(w, asGet(r), c); ok {
		for k, v := range values {
			p.Values[k] = v
		}
		h.refuse(w, r, "orgsettings", p, err, p.Values, fields...)
	}
}
