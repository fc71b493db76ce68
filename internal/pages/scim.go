package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
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

// scimPage is the provisioning page of the workspace in the path; Tokens
// answers 403 to the roles without org.settings.manage and on a personal
// workspace.
func (h *handlers) scimPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	if h.scim == nil {
		h.pageError(w, r, gatehouse.Errorf(gatehouse.KindNotFound, "page not found"))
		return nil, false
	}
	o := h.orgPage(w, r, c)
	if o == nil {
		return nil, false
	}
	toks, err := h.scim.Tokens(r.Context(), c.p, o.ID)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	set, err := h.scim.Settings(r.Context(), c.p, o.ID)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	p := c.page(r, tr(r, "%s: provisioning", o.Name), "workspaces")
	p.Data = &scimData{Org: *o, Links: orgLinks(o), Here: "scim", BaseURL: h.scim.BaseURL(), Tokens: toks,
		ProvisionRole: set.ProvisionRole, Roles: scim.ProvisionRoles}
	return p, true
}

// handleSCIMPage handles "GET /workspaces/{id}/scim": the SCIM base URL,
// the workspace's tokens, the create form, and once, right after creating
// one, its secret (only for a token this page lists).
func (h *handlers) handleSCIMPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	p, ok := h.scimPage(w, r, c)
	if !ok {
		return
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
}

// scimCaller is the signed-in caller of a provisioning form, or nil once
// it answered: the sign-in page, or 404 when the service runs without SCIM.
func (h *handlers) scimCaller(w http.ResponseWriter, r *http.Request) *caller {
	c := h.caller(w, r)
	if c == nil {
		return nil
	}
	if h.scim == nil {
		h.pageError(w, r, gatehouse.Errorf(gatehouse.KindNotFound, "page not found"))
		return nil
	}
	return c
}

// refuseSCIM shows the provisioning page again with err beside field,
// which keeps value.
func (h *handlers) refuseSCIM(w http.ResponseWriter, r *http.Request, c *caller, err error, field, value string) {
	if p, ok := h.scimPage(w, asGet(r), c); ok {
		p.Notice = ""
		h.refuse(w, r, "scim", p, err, map[string]string{field: value}, field)
	}
}

// handleCreateSCIMToken handles "POST /workspaces/{id}/scim": name;
// CreateToken decides who may (403) and what is valid (400, by its field).
func (h *handlers) handleCreateSCIMToken(w http.ResponseWriter, r *http.Request) {
	c := h.scimCaller(w, r)
	if c == nil {
		return
	}
	id, name := r.PathValue("id"), r.PostFormValue("name")
	nt, err := h.scim.CreateToken(r.Context(), c.p, id, name)
	if err != nil {
		h.refuseSCIM(w, r, c, err, "name", name)
		return
	}
	h.showOnce(w, scimPath(id), nt.Token.ID, nt.Secret)
	http.Redirect(w, r, scimPath(id), http.StatusSeeOther)
}

// handleDeleteSCIMToken handles "POST /workspaces/{id}/scim/delete".
func (h *handlers) handleDeleteSCIMToken(w http.ResponseWriter, r *http.Request) {
	c := h.scimCaller(w, r)
	if c == nil {
		return
	}
	id, tokenID := r.PathValue("id"), r.PostFormValue("token_id")
	tokens, err := h.scim.Tokens(r.Context(), c.p, id)
	if err != nil {
		h.pageError(w, r, err)
		return
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
		return
	}
	if err := h.scim.DeleteToken(r.Context(), c.p, id, tokenID); err != nil {
		h.pageError(w, r, err)
		return
	}
	done(w, r, scimPath(id), "scim-token-deleted")
}

// handleSCIMSettings handles "POST /workspaces/{id}/scim/settings":
// provision_role; SetProvisionRole decides who may (403) and which roles
// are allowed (400, by its field; never owner).
func (h *handlers) handleSCIMSettings(w http.ResponseWriter, r *http.Request) {
	c := h.scimCaller(w, r)
	if c == nil {
		return
	}
	id, role := r.PathValue("id"), r.PostFormValue("provision_role")
	if _, err := h.scim.SetProvisionRole(r.Context(), c.p, id, role); err != nil {
		h.refuseSCIM(w, r, c, err, "provision_role", role)
		return
	}
	done(w, r, scimPath(id), "scim-settings")
}
