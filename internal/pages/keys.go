package pages

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// keyExpiries are the expiry choices of the create form, in days (0: never).
var keyExpiries = []struct {
	Days  int
	Label string
}{{30, "30 days"}, {90, "90 days"}, {365, "1 year"}, {0, "Never"}}

// keysPage is the keys page of c with its lists.
func (h *handlers) keysPage(w http.ResponseWriter, r *http.Request, c *caller) (*page, bool) {
	keys, err := h.svc.UserKeys(r.Context(), c.p)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	rows := make([]keyRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, keyRow{APIKey: k, Workspace: orgName(orgs, k.OrgID)})
	}
	p := c.page(r, "Personal API keys", "keys")
	p.Data = map[string]any{"Keys": rows, "Orgs": orgs, "Tools": workspace.Tools, "Expiries": keyExpiries}
	p.Values = map[string]string{"org_id": def, "expires_in_days": "90", "scope": "all"}
	return p, true
}

// keyRow is one key as the page lists it.
type keyRow struct {
	workspace.APIKey
	Workspace string
}

// handleKeysPage handles "GET /account/keys": the personal keys, the
// create form, and once, right after creating one, its secret.
func (h *handlers) handleKeysPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	p, ok := h.keysPage(w, r, c)
	if !ok {
		return
	}
	if id, secret := h.takeShown(w, r, "/account/keys"); secret != "" {
		// Shown only for a key of this user that is still listed.
		for _, k := range p.Data.(map[string]any)["Keys"].([]keyRow) {
			if k.ID == id && strings.HasPrefix(secret, k.Prefix) {
				p.Data.(map[string]any)["Secret"], p.Data.(map[string]any)["SecretName"] = secret, k.Name
				p.Script = copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "keys", p)
}

// handleCreateKey handles "POST /account/keys": name, workspace, tools
// (all, or the ones ticked) and expiry.
func (h *handlers) handleCreateKey(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	in := keyInput(r)
	in.OrgID = r.PostFormValue("org_id")
	nk, err := (*workspace.NewKey)(nil), noTools(in)
	if err == nil {
		nk, err = h.svc.CreateUserKey(r.Context(), c.p, in)
	}
	if err != nil {
		p, ok := h.keysPage(w, r, c)
		if ok {
			p.Notice = ""
			h.refuse(w, r, "keys", p, err, map[string]string{"name": in.Name, "org_id": in.OrgID,
				"expires_in_days": r.PostFormValue("expires_in_days"), "scope": r.PostFormValue("scope"),
				"tools": strings.Join(r.PostForm["tools"], " ")}, "name", "expires_in_days", "tools")
		}
		return
	}
	h.showOnce(w, "/account/keys", nk.Key.ID, nk.Secret)
	http.Redirect(w, r, "/account/keys", http.StatusSeeOther)
}

// noTools refuses a key form's "Only these:" with no tool ticked: such a
// key opens no tool, which is never what the form's person meant (the
// API's explicit empty list stays allowed).
func noTools(in workspace.KeyInput) error {
	if in.ToolsSet && len(in.Tools) == 0 {
		return gatehouse.InvalidField("tools", "tick at least one tool, or choose every tool")
	}
	return nil
}

// keyInput is a key create form's name, role, tools (all, or the ones
// ticked) and expiry; an expiry that is not a number reaches the service as
// -1, which it refuses with its message.
func keyInput(r *http.Request) workspace.KeyInput {
	in := workspace.KeyInput{Name: r.PostFormValue("name"), Role: r.PostFormValue("role")}
	if r.PostFormValue("scope") == "some" {
		in.Tools, in.ToolsSet = append([]string{}, r.PostForm["tools"]...), true
	}
	days, err := strconv.Atoi(r.PostFormValue("expires_in_days"))
	if err != nil {
		days = -1
	}
	in.ExpiresInDays = &days
	return in
}

// handleRevokeKey handles "POST /account/keys/revoke".
func (h *handlers) handleRevokeKey(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PostFormValue("id")
	keys, err := h.svc.UserKeys(r.Context(), c.p)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	name := keyName(keys, id)
	if !h.confirmed(w, r, c, "keys", confirmStep{Title: tr(r, "Revoke the API key %s?", name),
		Message: tr(r, "Every program that uses %s stops working at once. This cannot be undone: a new key has a new secret.", name),
		Button:  tr(r, "Revoke %s", name), Back: "/account/keys"}) {
		return
	}
	if err := h.svc.RevokeUserKey(r.Context(), c.p, id); err != nil {
		h.pageError(w, r, err)
		return
	}
	h.doneNamed(w, r, "/account/keys", "key-revoked", name)
}

// keyName is how a confirmation names the key id of keys.
func keyName(keys []workspace.APIKey, id string) string {
	for _, k := range keys {
		if k.ID == id {
			return "“" + k.Name + "”"
		}
	}
	return "this key"
}
