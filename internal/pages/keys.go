package pages

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "key-revoked", Text: "API key revoked.", Named: "The API key %s was revoked: it no longer works."},
}.add()

// keyExpiries are the expiry choices of the create form, in days (0: never).
var keyExpiries = []struct {
	Days  int
	Label string
}{{30, "30 days"}, {90, "90 days"}, {365, "1 year"}, {0, "Never"}}

// keysPage is the keys page of c with its lists.
func (h *handlers) keysPage(r *http.Request, c *caller) (*page, error) {
	keys, err := h.svc.UserKeys(r.Context(), c.p)
	if err != nil {
		return nil, err
	}
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		return nil, err
	}
	rows := make([]keyRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, keyRow{APIKey: k, Workspace: orgName(orgs, k.OrgID)})
	}
	p := c.page(r, "Personal API keys", "keys")
	p.Data = map[string]any{"Keys": rows, "Orgs": orgs, "Tools": workspace.Tools, "Expiries": keyExpiries}
	p.Values = map[string]string{"org_id": def, "expires_in_days": "90", "scope": "all"}
	return p, nil
}

// keyRow is one key as the page lists it.
type keyRow struct {
	workspace.APIKey
	Workspace string
}

// handleKeysPage handles "GET /account/keys": the personal keys, the
// create form, and once, right after creating one, its secret.
func (h *handlers) handleKeysPage(w http.ResponseWriter, r *http.Request, c *caller) error {
	p, err := h.keysPage(r, c)
	if err != nil {
		return err
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
	return nil
}

// handleCreateKey handles "POST /account/keys": name, workspace, tools
// (all, or the ones ticked) and expiry.
func (h *handlers) handleCreateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	f := parseKeyForm(r)
	nk, err := (*workspace.NewKey)(nil), f.check()
	if err == nil {
		nk, err = h.svc.CreateUserKey(r.Context(), c.p, f.in)
	}
	if err != nil {
		p, perr := h.keysPage(r, c)
		if perr != nil {
			return perr
		}
		p.Notice = ""
		return refused("keys", p, err, f.values(), "name", "expires_in_days", "tools")
	}
	h.showOnce(w, "/account/keys", nk.Key.ID, nk.Secret)
	http.Redirect(w, r, "/account/keys", http.StatusSeeOther)
	return nil
}

// keyForm is a key create form, personal or the workspace's: name,
// workspace (personal keys), role (workspace keys), tools (all, or the
// ones ticked) and expiry; an expiry that is not a number reaches the
// service as -1, which it refuses with its message.
type keyForm struct {
	in             workspace.KeyInput
	expires, scope string // as typed
	tools          []string
}

func parseKeyForm(r *http.Request) keyForm {
	f := keyForm{in: workspace.KeyInput{Name: r.PostFormValue("name"), Role: r.PostFormValue("role"), OrgID: r.PostFormValue("org_id")},
		expires: r.PostFormValue("expires_in_days"), scope: r.PostFormValue("scope"), tools: r.PostForm["tools"]}
	if f.scope == "some" {
		f.in.Tools, f.in.ToolsSet = append([]string{}, f.tools...), true
	}
	days, err := strconv.Atoi(f.expires)
	if err != nil {
		days = -1
	}
	f.in.ExpiresInDays = &days
	return f
}

// check refuses "Only these:" with no tool ticked: such a key opens no
// tool, which is never what the form's person meant (the API's explicit
// empty list stays allowed).
func (f keyForm) check() error {
	if f.in.ToolsSet && len(f.in.Tools) == 0 {
		return gatehouse.InvalidField("tools", "tick at least one tool, or choose every tool")
	}
	return nil
}

// values are the form's values as typed, shown again around its refusal.
func (f keyForm) values() map[string]string {
	return map[string]string{"name": f.in.Name, "org_id": f.in.OrgID, "role": f.in.Role,
		"expires_in_days": f.expires, "scope": f.scope, "tools": strings.Join(f.tools, " ")}
}

// handleRevokeKey handles "POST /account/keys/revoke".
func (h *handlers) handleRevokeKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PostFormValue("id")
	keys, err := h.svc.UserKeys(r.Context(), c.p)
	if err != nil {
		return err
	}
	name := keyName(keys, id)
	if !h.confirmed(w, r, c, "keys", confirmStep{Title: tr(r, "Revoke the API key %s?", name),
		Message: tr(r, "Every program that uses %s stops working at once. This cannot be undone: a new key has a new secret.", name),
		Button:  tr(r, "Revoke %s", name), Back: "/account/keys"}) {
		return nil
	}
	if err := h.svc.RevokeUserKey(r.Context(), c.p, id); err != nil {
		return err
	}
	h.doneNamed(w, r, "/account/keys", "key-revoked", name)
	return nil
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
