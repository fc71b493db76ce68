package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "org-saved", Text: "Workspace settings saved."},
	{Key: "org-mfa-on", Text: "Two-factor sign-in is now required: members without it are asked to set it up before they reach the workspace."},
	{Key: "org-mfa-off", Text: "Two-factor sign-in is no longer required in this workspace."},
	{Key: "org-deleted", Text: "Workspace deleted."},
}.add()

// orgSettingsData is the workspace settings page's data.
type orgSettingsData struct {
	Org       workspace.OrgListing
	Links     []orgLink
	Here      string
	CanDelete bool // the workspace's capability (org.delete)
}

// orgSettingsPage is "GET /workspaces/{id}/settings"; the roles without
// the capability get the service's refusal (not a form they cannot use):
// 403 without org.settings.manage, on a personal workspace its own.
func (h *handlers) orgSettingsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	caps := o.Capabilities()
	if !caps.CanInTeam(workspace.PermSettings) {
		_, err := h.ws.UpdateOrg(r.Context(), c.p, o.ID, workspace.OrgPatch{})
		return nil, err
	}
	// The listing leaves out the policy; the profile has it.
	prof, err := h.ws.OrgProfile(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	o.RequireMFA = prof.Org.RequireMFA
	p := c.page(r, tr(r, "%s: settings", o.Name), "workspaces")
	p.Data = orgSettingsData{Org: *o, Links: orgLinks(o), Here: "settings", CanDelete: caps.Can(workspace.PermDelete)}
	p.Values = orgSettingsForm{Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL}.values()
	return p, nil
}

// orgSettingsForm is the settings form: the workspace's name, slug and
// avatar URL.
type orgSettingsForm struct{ Name, Slug, AvatarURL string }

func parseOrgSettingsForm(r *http.Request) orgSettingsForm {
	return orgSettingsForm{Name: r.PostFormValue("name"), Slug: r.PostFormValue("slug"), AvatarURL: r.PostFormValue("avatar_url")}
}

func (f orgSettingsForm) values() map[string]string {
	return map[string]string{"name": f.Name, "slug": f.Slug, "avatar_url": f.AvatarURL}
}

// patch is what the form changes in o: only the fields that differ, so an
// unchanged form is saved as it is.
func (f orgSettingsForm) patch(o *workspace.OrgListing) workspace.OrgPatch {
	changed := func(v, cur string) *string {
		if strings.TrimSpace(v) == cur {
			return nil
		}
		return new(v)
	}
	return workspace.OrgPatch{Name: changed(f.Name, o.Name), Slug: changed(f.Slug, o.Slug), AvatarURL: changed(f.AvatarURL, o.AvatarURL)}
}

// handleOrgSettings handles "POST /workspaces/{id}/settings": name, slug
// and avatar_url; UpdateOrg decides who may (403) and what is valid (400, 409).
func (h *handlers) handleOrgSettings(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	f := parseOrgSettingsForm(r)
	// An empty patch still asks UpdateOrg, which refuses (403) the roles
	// that may not change settings.
	patch := f.patch(o)
	if patch.Name != nil || patch.Slug != nil || patch.AvatarURL != nil || !o.Capabilities().CanInTeam(workspace.PermSettings) {
		if _, err := h.ws.UpdateOrg(r.Context(), c.p, o.ID, patch); err != nil {
			return h.orgSettingsRefused(r, c, err, f.values(), "name", "slug", "avatar_url")
		}
	}
	done(w, r, "/workspaces/"+o.ID+"/settings", "org-saved")
	return nil
}

// handleOrgTwoFactor handles "POST /workspaces/{id}/settings/two-factor":
// the switch "require two-factor sign-in" (require=on or off); UpdateOrg
// decides who may (403) and refuses turning it on from a session without
// a second factor, which would lock the caller out.
func (h *handlers) handleOrgTwoFactor(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, on := r.PathValue("id"), r.PostFormValue("require") == "on"
	if _, err := h.ws.UpdateOrg(r.Context(), c.p, id, workspace.OrgPatch{RequireMFA: &on}); err != nil {
		return h.orgSettingsRefused(r, c, err, nil, "require_mfa")
	}
	key := "org-mfa-off"
	if on {
		key = "org-mfa-on"
	}
	done(w, r, "/workspaces/"+id+"/settings", key)
	return nil
}

// handleOrgDelete handles "POST /workspaces/{id}/delete": the workspace's
// name typed as confirmation; DeleteOrg decides who may (403).
func (h *handlers) handleOrgDelete(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	var err error
	if strings.TrimSpace(r.PostFormValue("confirm")) != o.Name && o.Capabilities().Can(workspace.PermDelete) {
		err = gatehouse.InvalidField("confirm", "confirmation must be the workspace's name, typed exactly")
	}
	if err == nil {
		err = h.ws.DeleteOrg(r.Context(), c.p, o.ID)
	}
	if err != nil {
		return h.orgSettingsRefused(r, c, err, map[string]string{"confirm": r.PostFormValue("confirm")}, "confirm")
	}
	done(w, r, "/account/workspaces", "org-deleted")
	return nil
}

// orgSettingsRefused shows the settings page again with the refusal next to
// its field; a 403 or 404 of the workspace itself is the error page.
func (h *handlers) orgSettingsRefused(r *http.Request, c *caller, err error, values map[string]string, fields ...string) error {
	var e *gatehouse.Error
	if !errors.As(err, &e) || (e.Kind == gatehouse.KindForbidden && e.Field == "") || e.Kind == gatehouse.KindNotFound {
		return err
	}
	p, perr := h.pageIn(asGet(r), c, h.orgSettingsPage)
	if perr != nil {
		return perr
	}
	for k, v := range values {
		p.Values[k] = v
	}
	return refused("orgsettings", p, err, p.Values, fields...)
}
