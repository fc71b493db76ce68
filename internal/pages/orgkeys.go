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

// orgKeysPage is the keys page of workspace o; OrgKeys answers 403 to the
// roles without org.settings.manage.
func (h *handlers) orgKeysPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	keys, err := h.ws.OrgKeys(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
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
	return p, nil
}

// handleOrgKeysPage handles "GET /workspaces/{id}/keys": the workspace's
// usable keys, the create form, and once, right after creating one, its
// secret (only for a key this page lists, whose prefix it starts with).
func (h *handlers) handleOrgKeysPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.orgKeysPage(r, c, o)
	if err != nil {
		return err
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
	return nil
}

// handleCreateOrgKey handles "POST /workspaces/{id}/keys": name, role,
// tools (all, or the ones ticked) and expiry; CreateOrgKey decides who may
// (403) and what is valid (400, next to its field).
func (h *handlers) handleCreateOrgKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	f := parseKeyForm(r)
	f.in.OrgID = "" // the path's workspace
	nk, err := (*workspace.NewKey)(nil), f.check()
	if err == nil {
		nk, err = h.ws.CreateOrgKey(r.Context(), c.p, id, f.in)
	}
	if err != nil {
		return h.refusedIn(r, c, "orgkeys", h.orgKeysPage, err, f.values(), "name", "role", "expires_in_days", "tools")
	}
	h.showOnce(w, orgKeysPath(id), nk.Key.ID, nk.Secret)
	http.Redirect(w, r, orgKeysPath(id), http.StatusSeeOther)
	return nil
}

// handleRevokeOrgKey handles "POST /workspaces/{id}/keys/revoke".
func (h *handlers) handleRevokeOrgKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, keyID := r.PathValue("id"), r.PostFormValue("key_id")
	keys, err := h.ws.OrgKeys(r.Context(), c.p, id)
	if err != nil {
		return err
	}
	name := keyName(keys, keyID)
	if !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Revoke the API key %s?", name),
		Message: tr(r, "Every program that uses %s stops working at once. This cannot be undone: a new key has a new secret.", name),
		Button:  tr(r, "Revoke %s", name), Back: orgKeysPath(id)}) {
		return nil
	}
	if err := h.ws.RevokeOrgKey(r.Context(), c.p, id, keyID); err != nil {
		return err
	}
	h.doneNamed(w, r, orgKeysPath(id), "key-revoked", name)
	return nil
}
