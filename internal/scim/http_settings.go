package scim

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// settingsJSON is a workspace's SCIM settings in the API.
type settingsJSON struct {
	OrgID         string  `json:"org_id"`
	ProvisionRole string  `json:"provision_role"`
	UpdatedBy     *string `json:"updated_by"`
	UpdatedAt     *string `json:"updated_at"`
}

func writeSettings(w http.ResponseWriter, s *Settings) {
	out := settingsJSON{OrgID: s.OrgID, ProvisionRole: s.ProvisionRole}
	if s.UpdatedBy != "" {
		at := httpjson.Stamp(s.UpdatedAt)
		out.UpdatedBy, out.UpdatedAt = &s.UpdatedBy, &at
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"scim_settings": out})
}

// handleSettings handles "GET /v1/orgs/{id}/scim-settings".
func (h *handlers) handleSettings(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	s, err := h.svc.Settings(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeSettings(w, s)
	return nil
}

// handleSetSettings handles "PATCH /v1/orgs/{id}/scim-settings".
func (h *handlers) handleSetSettings(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		ProvisionRole string `json:"provision_role"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	s, err := h.svc.SetProvisionRole(r.Context(), p, r.PathValue("id"), in.ProvisionRole)
	if err != nil {
		return err
	}
	writeSettings(w, s)
	return nil
}
