package sso

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// handleIDJAGPolicy handles "GET /v1/orgs/{id}/sso/idjag".
func (h *handlers) handleIDJAGPolicy(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	pol, err := h.svc.IDJAGPolicyOf(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]*IDJAGPolicy{"policy": pol})
	return nil
}

// handleSetIDJAGPolicy handles "PUT /v1/orgs/{id}/sso/idjag".
func (h *handlers) handleSetIDJAGPolicy(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in IDJAGPolicy
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	pol, err := h.svc.SetIDJAGPolicy(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]*IDJAGPolicy{"policy": pol})
	return nil
}
