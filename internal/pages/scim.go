package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/scim"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// scimData is the workspace provisioning page's data.
type scimData struct {
	Org                workspace.OrgListing
	Links              []orgLink
	Here               string
	BaseURL            string
	Tokens             []scim.Token
	Secret, SecretName string
	ProvisionRole      string   // the role the directory provisions with
	Roles              []string // the roles it may be
}

// scimPath is the provisioning page of workspace id.
func scimPath(id string) string { return "/workspaces/" + id + "/scim" }

// The notices of the provisioning page.
var _ = pageNotices{
	{Key: "scim-token-deleted", Text: "SCIM token deleted."},
	{Key: "scim-settings", Text: "Provisioning role saved: the directory's next members get it."},
}.add()

// scimPage is the provisioning page of workspace o; Tokens
// answers 403 to the roles without org.settings.manage and on a personal
// workspace.
func (h *handlers) scimPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	if h.scim == nil {
		return nil, errPageNotFound
	}
	toks, err := h.scim.Tokens(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	set, err := h.scim.Settings(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	p := c.page(r, tr(r, "%s: provisioning", o.Name), "workspaces")
	p.Data = &scimData{Org: *o, Links: orgLinks(o), Here: "scim", BaseURL: h.scim.BaseURL(), Tokens: toks,
		ProvisionRole: set.ProvisionRole, Roles: scim.ProvisionRoles}
	return p, nil
}

// handleSCIMPage handles "GET /workspaces/{id}/scim": the SCIM base URL,
// the workspace's tokens, the create form, and once, right after creating
// one, its secret (only for a token this page lists).
func (h *handlers) handleSCIMPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.scimPage(r, c, o)
	if err != nil {
		return err
	}
	d := p.Data.(*scimData)
	if id, secret := h.takeShown(w, r, scimPath(d.Org.ID)); secret != "" {
		for _, t := range d.Tokens {
			if t.ID == id && strings.HasPrefix(secret, t.Prefix) {
				d.Secret, d.SecretName, p.Script = secret, t.Name, copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "scim", p)
	return nil
}

// handleCreateSCIMToken handles "POST /workspaces/{id}/scim": name;
// CreateToken decides who may (403) and what is valid (400, by its field).
func (h *handlers) handleCreateSCIMToken(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, name := r.PathValue("id"), r.PostFormValue("name")
	nt, err := h.scim.CreateToken(r.Context(), c.p, id, name)
	if err != nil {
		return h.refusedIn(r, c, "scim", h.scimPage, err, map[string]string{"name": name}, "name")
	}
	h.showOnce(w, scimPath(id), nt.Token.ID, nt.Secret)
	http.Redirect(w, r, scimPath(id), http.StatusSeeOther)
	return nil
}

// handleDeleteSCIMToken handles "POST /workspaces/{id}/scim/delete".
func (h *handlers) handleDeleteSCIMToken(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, tokenID := r.PathValue("id"), r.PostFormValue("token_id")
	tokens, err := h.scim.Tokens(r.Context(), c.p, id)
	if err != nil {
		return err
	}
	name := "this token"
	for _, t := range tokens {
		if t.ID == tokenID {
			name = t.Name
		}
	}
	if !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Delete the SCIM token %s?", name),
		Message: tr(r, "Your directory stops provisioning with %s at once. This cannot be undone: a new token has a new secret.", name),
		Button:  tr(r, "Delete %s", name), Back: scimPath(id)}) {
		return nil
	}
	if err := h.scim.DeleteToken(r.Context(), c.p, id, tokenID); err != nil {
		return err
	}
	done(w, r, scimPath(id), "scim-token-deleted")
	return nil
}

// handleSCIMSettings handles "POST /workspaces/{id}/scim/settings":
// provision_role; SetProvisionRole decides who may (403) and which roles
// are allowed (400, by its field; never owner).
func (h *handlers) handleSCIMSettings(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, role := r.PathValue("id"), r.PostFormValue("provision_role")
	if _, err := h.scim.SetProvisionRole(r.Context(), c.p, id, role); err != nil {
		return h.refusedIn(r, c, "scim", h.scimPage, err, map[string]string{"provision_role": role}, "provision_role")
	}
	done(w, r, scimPath(id), "scim-settings")
	return nil
}
