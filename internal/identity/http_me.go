package identity

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The handlers of /v1/me: the caller's profile, password, workspaces,
// sessions, OAuth grants and personal API keys.

// handlePatchMe handles "PATCH /v1/me".
func (h *handlers) handlePatchMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name      *string `json:"name"`
		AvatarURL *string `json:"avatar_url"`
		Language  *string `json:"language"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	u, err := h.svc.UpdateProfile(r.Context(), p, ProfilePatch{Name: in.Name, AvatarURL: in.AvatarURL, Language: in.Language})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"user": toUser(u)})
	return nil
}

// handleDeleteMe handles "DELETE /v1/me".
func (h *handlers) handleDeleteMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteAccount(r.Context(), p); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "account deleted"})
	return nil
}

// handlePassword handles "POST /v1/me/password".
func (h *handlers) handlePassword(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
		RevokeAPIKeys   bool   `json:"revoke_api_keys"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	ch := PasswordChange{Current: in.CurrentPassword, New: in.NewPassword, RevokeKeys: in.RevokeAPIKeys}
	if err := h.svc.ChangePassword(r.Context(), p, ch, h.k.SessionMeta(r)); err != nil {
		return err
	}
	msg := "password changed; other sessions were signed out"
	if in.RevokeAPIKeys {
		msg += " and your personal API keys revoked"
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": msg})
	return nil
}

// handleResend handles "POST /v1/me/verify-email/resend".
func (h *handlers) handleResend(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	outcome, err := h.svc.ResendVerification(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": outcome})
	return nil
}

// handleMyOrgs handles "GET /v1/me/orgs".
func (h *handlers) handleMyOrgs(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	orgs, def, err := h.svc.MyOrgs(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]orgListingJSON, len(orgs))
	for i := range orgs {
		out[i] = toOrgListing(&orgs[i], def)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"orgs": out})
	return nil
}

// handleSessions handles "GET /v1/me/sessions".
func (h *handlers) handleSessions(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ss, err := h.svc.Sessions(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]sessionRowJSON, len(ss))
	for i := range ss {
		out[i] = toSessionRow(&ss[i], p.SessionID)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"sessions": out})
	return nil
}

// handleDeleteSession handles "DELETE /v1/me/sessions/{sid}".
func (h *handlers) handleDeleteSession(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RevokeSession(r.Context(), p, r.PathValue("sid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "session revoked"})
	return nil
}

// handleGrants handles "GET /v1/me/grants".
func (h *handlers) handleGrants(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	gs, err := h.svc.Grants(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]grantJSON, len(gs))
	for i := range gs {
		out[i] = toGrant(&gs[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"grants": out})
	return nil
}

// handleDeleteGrant handles "DELETE /v1/me/grants/{gid}".
func (h *handlers) handleDeleteGrant(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RevokeGrant(r.Context(), p, r.PathValue("gid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "grant revoked"})
	return nil
}

// handleUserKeys handles "GET /v1/me/api-keys".
func (h *handlers) handleUserKeys(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ks, err := h.svc.UserKeys(r.Context(), p)
	if err != nil {
		return err
	}
	workspace.WriteKeys(w, ks)
	return nil
}

// handleCreateUserKey handles "POST /v1/me/api-keys": the new key with its
// show-once secret.
func (h *handlers) handleCreateUserKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	return workspace.CreateKey(w, r, func(in workspace.KeyInput) (*workspace.NewKey, error) { return h.svc.CreateUserKey(r.Context(), p, in) })
}

// handleDeleteUserKey handles "DELETE /v1/me/api-keys/{kid}".
func (h *handlers) handleDeleteUserKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RevokeUserKey(r.Context(), p, r.PathValue("kid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "api key revoked"})
	return nil
}
