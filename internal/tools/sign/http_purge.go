package sign

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// handlePatchDocument handles "PATCH /sign/v1/documents/{id}": the owner
// sets or clears the legal hold ({"legalHold": bool}, the one field it
// changes).
func (h *handlers) handlePatchDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		LegalHold *bool `json:"legalHold"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if in.LegalHold == nil {
		return gatehouse.Invalid("legalHold (a boolean) is required")
	}
	d, err := h.svc.SetLegalHold(r.Context(), p, r.PathValue("id"), *in.LegalHold)
	return h.writeDocument(w, d, err)
}
