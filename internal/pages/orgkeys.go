package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// orgKeysData is the workspace keys page's data.
type orgKeysData struct {
	Org                workspace.OrgListing
	Links              []orgLink
	Here               string
	Keys               []workspace.APIKey
	Tools              []string
	Roles              []string
	Expiries           any
	Secret, SecretName string
}

// orgKeysPath is the keys page of workspace id.
func orgKeysPath(id string) string { return "/workspaces/" + id + "/keys" }

// orgKeysPage is the keys page of the workspace in the path; OrgKeys
// answers 403 to the roles without org.settings.manage.
func (h *handlers) orgKeysPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	o := h.orgPage(w, r, c)
	if o == nil {
		return nil, false
	}
	keys, err := h.ws.OrgKeys(r.Context(), c.p, o.ID)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	var live []workspace.APIKey
	for _, k := range keys {
		if k.Usable(h.ws.Now()) {
			live = append(live, k)
		}
	}
	p := c.page(r, tr(r, "%s: workspace API keys", o.Name), "workspaces")
	p.Data = &orgKeysData{Org: *o, Links: orgLinks(o), Here: "keys", Keys: live, Tools: workspace.Tools, Expiries: keyExpiries,
		Roles: []string{workspace.RoleMember, workspace.RoleBilling, workspace.RoleAdmin}}
	p.Values = map[string]string{"role": workspace.RoleMember, "expires_in_days": "90", "scope": "all"}
	return p, true
}

// handleOrgKeysPage handles "GET /workspaces/{id}/keys": the workspace's
// usable keys, the create form, and once, right after creating one, its
// secret (only for a key this page lists, whose prefix it starts with).
func (h *handlers) handleOrgKeysPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	p, ok := h.orgKeysPage(w, r, c)
	if !ok {
		return
	}
	d := p.Data.(*orgKeysData)
	if id, secret := h.takeShown(w, r, orgKeysPath(d.Org.ID)); secret != "" {
		for _, k := range d.Keys {
			if k.ID == id && strings.HasPrefix(secret, k.Prefix) {
				d.Secret, d.SecretName, p.Script = secret, k.Name, copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "orgkeys", p)
}

// handleCreateOrgKey handles "POST /workspaces/{id}/keys": name, role,
// tools (all, or the ones ticked) and expiry; CreateOrgKey decides who may
// (403) and what is valid (400, next to its field).
func (h *handlers) handleCreateOrgKey(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	in := keyInput(r)
	nk, err := (*workspace.NewKey)(nil), noTools(in)
	if err == nil {
		nk, err = h.ws.CreateOrgKey(r.Context(), c.p, id, in)
	}
	if err != nil {
		if p, ok := h.orgKeysPage(w, asGet(r), c); ok {
			p.Notice = ""
			h.refuse(w, r, "orgkeys", p, err, map[string]string{"name": in.Name, "role": in.Role,
				"expires_in_days": r.PostFormValue("expires_in_days"), "scope": r.PostFormValue("scope"),
				"tools": strings.Join(r.PostForm["tools"], " ")}, "name", "role", "expires_in_days", "tools")
		}
		return
	}
	h.showOnce(w, orgKeysPath(id), nk.Key.ID, nk.Secret)
	http.Redirect(w, r, orgKeysPath(id), http.StatusSeeOther)
}

// handleRevokeOrgKey handles "POST /workspaces/{id}/keys/revoke".
func (h *handlers) handleRevokeOrgKey(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id, keyID := r.PathValue("id"), r.PostFormValue("key_id")
	keys, err := h.ws.OrgKeys(r.Context(), c.p, id)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	name := keyName(keys, keyID)
	if !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Revoke the API key %s?", name),
		Message: tr(r, "Every program that uses %s stops working at once. This cannot be undone: a new key has a new secret.", name),
		Button:  tr(r, "Revoke %s", name), Back: orgKeysPath(id)}) {
		return
	}
	if err := h.ws.RevokeOrgKey(r.Context(), c.p, id, keyID); err != nil {
		h.pageError(w, r, err)
		return
	}
	h.doneNamed(w, r, orgKeysPath(id), "key-revoked", name)
}
