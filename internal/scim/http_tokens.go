package scim

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// tokenJSON is a SCIM token in the API; Token (the secret) only in the
// answer that creates it.
type tokenJSON struct {
	ID        string `json:"id"`
	OrgID     string `json:"org_id"`
	Name      string `json:"name"`
	Prefix    string `json:"prefix"`
	CreatedBy string `json:"created_by"`
	CreatedAt string `json:"created_at"`
	Token     string `json:"token,omitempty"`
}

func toToken(t *Token) tokenJSON {
	return tokenJSON{ID: t.ID, OrgID: t.OrgID, Name: t.Name, Prefix: t.Prefix, CreatedBy: t.CreatedBy, CreatedAt: httpjson.Stamp(t.CreatedAt)}
}

// handleTokens handles "GET /v1/orgs/{id}/scim-tokens".
func (h *handlers) handleTokens(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ts, err := h.svc.Tokens(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]tokenJSON, 0, len(ts))
	for i := range ts {
		out = append(out, toToken(&ts[i]))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"scim_tokens": out, "base_url": h.svc.BaseURL()})
	return nil
}

// handleCreateToken handles "POST /v1/orgs/{id}/scim-tokens": the new
// token with its secret, in token, this once.
func (h *handlers) handleCreateToken(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	nt, err := h.svc.CreateToken(r.Context(), p, r.PathValue("id"), in.Name)
	if err != nil {
		return err
	}
	out := toToken(nt.Token)
	out.Token = nt.Secret
	httpjson.Write(w, http.StatusOK, map[string]any{"scim_token": out, "base_url": h.svc.BaseURL()})
	return nil
}

// handleDeleteToken handles "DELETE /v1/orgs/{id}/scim-tokens/{tid}".
func (h *handlers) handleDeleteToken(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteToken(r.Context(), p, r.PathValue("id"), r.PathValue("tid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "scim token deleted"})
	return nil
}
