package workspace

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// The handlers of a workspace's settings: teams, tool switches, the
// workspace's API keys, the audit log and domain claims.

// handleTeams handles "GET /v1/orgs/{id}/teams".
func (h *handlers) handleTeams(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ts, err := h.svc.Teams(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]teamJSON, len(ts))
	for i := range ts {
		out[i] = toTeam(&ts[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"teams": out})
	return nil
}

// handleCreateTeam handles "POST /v1/orgs/{id}/teams".
func (h *handlers) handleCreateTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in teamInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	t, err := h.svc.CreateTeam(r.Context(), p, r.PathValue("id"), TeamPatch{Name: in.Name, Description: in.Description})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"team": toTeam(t)})
	return nil
}

// handlePatchTeam handles "PATCH /v1/orgs/{id}/teams/{tid}".
func (h *handlers) handlePatchTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in teamInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.UpdateTeam(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), TeamPatch{Name: in.Name, Description: in.Description}); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "team updated"})
	return nil
}

// handleDeleteTeam handles "DELETE /v1/orgs/{id}/teams/{tid}".
func (h *handlers) handleDeleteTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteTeam(r.Context(), p, r.PathValue("id"), r.PathValue("tid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "team deleted"})
	return nil
}

// handleTeamMembers handles "GET /v1/orgs/{id}/teams/{tid}/members".
func (h *handlers) handleTeamMembers(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	rows, err := h.svc.TeamMembers(r.Context(), p, r.PathValue("id"), r.PathValue("tid"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"members": toPeople(rows)})
	return nil
}

// handleSetTeamMember handles "POST /v1/orgs/{id}/teams/{tid}/members".
func (h *handlers) handleSetTeamMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		UserID string `json:"user_id"`
		Role   string `json:"role"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.SetTeamMember(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), in.UserID, in.Role); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "team member saved"})
	return nil
}

// handleRemoveTeamMember handles "DELETE /v1/orgs/{id}/teams/{tid}/members/{uid}".
func (h *handlers) handleRemoveTeamMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RemoveTeamMember(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), r.PathValue("uid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "team member removed"})
	return nil
}

// handleTools handles "GET /v1/orgs/{id}/tools".
func (h *handlers) handleTools(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	rows, err := h.svc.ToolMatrix(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeTools(w, rows)
	return nil
}

// handleSetTool handles "PUT /v1/orgs/{id}/tools": one tool, despite PUT.
func (h *handlers) handleSetTool(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Tool    string `json:"tool"`
		Enabled *bool  `json:"enabled"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	rows, err := h.svc.SetTool(r.Context(), p, r.PathValue("id"), in.Tool, in.Enabled)
	if err != nil {
		return err
	}
	writeTools(w, rows)
	return nil
}

// handleOrgKeys handles "GET /v1/orgs/{id}/api-keys".
func (h *handlers) handleOrgKeys(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ks, err := h.svc.OrgKeys(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteKeys(w, ks)
	return nil
}

// handleCreateOrgKey handles "POST /v1/orgs/{id}/api-keys": the new key
// with its show-once secret.
func (h *handlers) handleCreateOrgKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	return CreateKey(w, r, func(in KeyInput) (*NewKey, error) {
		return h.svc.CreateOrgKey(r.Context(), p, r.PathValue("id"), in)
	})
}

// handleDeleteOrgKey handles "DELETE /v1/orgs/{id}/api-keys/{kid}".
func (h *handlers) handleDeleteOrgKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RevokeOrgKey(r.Context(), p, r.PathValue("id"), r.PathValue("kid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "api key revoked"})
	return nil
}

// handleAudit handles "GET /v1/orgs/{id}/audit": an empty limit is
// refused here because the domain reads "" as no limit given.
func (h *handlers) handleAudit(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	q := r.URL.Query()
	if q.Has("limit") && q.Get("limit") == "" {
		return gatehouse.InvalidField("limit", "limit must be an integer from 1 to %d", AuditMaxLimit)
	}
	f := AuditFilter{Tool: q.Get("tool"), Action: q.Get("action"), Actor: q.Get("actor")}
	entries, tools, err := h.svc.AuditLog(r.Context(), p, r.PathValue("id"), f, q.Get("limit"))
	if err != nil {
		return err
	}
	out := make([]auditJSON, len(entries))
	for i := range entries {
		out[i] = toAudit(&entries[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"entries": out, "tools": tools})
	return nil
}

// handleDomains handles "GET /v1/orgs/{id}/domains".
func (h *handlers) handleDomains(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := h.svc.Domains(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]domainJSON, len(ds))
	for i := range ds {
		out[i] = toDomain(&ds[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domains": out})
	return nil
}

// handleClaimDomain handles "POST /v1/orgs/{id}/domains": the claim and
// the TXT record that proves it.
func (h *handlers) handleClaimDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in domainInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.ClaimDomain(r.Context(), p, r.PathValue("id"), in.Domain, in.Mode)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d)})
	return nil
}

// handlePatchDomain handles "PATCH /v1/orgs/{id}/domains/{did}": its mode.
func (h *handlers) handlePatchDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in domainInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.SetDomainMode(r.Context(), p, r.PathValue("id"), r.PathValue("did"), in.Mode)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d)})
	return nil
}

// handleDeleteDomain handles "DELETE /v1/orgs/{id}/domains/{did}".
func (h *handlers) handleDeleteDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteDomain(r.Context(), p, r.PathValue("id"), r.PathValue("did")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "domain claim removed"})
	return nil
}

// handleVerifyDomain handles "POST /v1/orgs/{id}/domains/{did}/verify":
// the claim after a TXT lookup, and what the lookup found.
func (h *handlers) handleVerifyDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, msg, err := h.svc.VerifyDomain(r.Context(), p, r.PathValue("id"), r.PathValue("did"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d), "message": msg})
	return nil
}
