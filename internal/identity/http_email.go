package identity

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// handleChangeEmail handles "POST /v1/me/email": a confirmation link to
// the new address; the account keeps its address until it is opened.
func (h *handlers) handleChangeEmail(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	email, err := h.svc.RequestEmailChange(r.Context(), p, in.Email)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, map[string]string{"message": "confirmation link sent to " + email + "; your address changes when it is opened"})
	return nil
}

// handleConfirmEmailChange handles "POST /v1/auth/email-change/confirm".
func (h *handlers) handleConfirmEmailChange(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	ch, err := h.svc.ConfirmEmailChange(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Message string   `json:"message"`
		User    userJSON `json:"user"`
	}{"email address changed", toUser(ch.User)})
	return nil
}

// handleUndoEmailChange handles "POST /v1/auth/email-change/undo".
func (h *handlers) handleUndoEmailChange(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if _, err := h.svc.UndoEmailChange(r.Context(), in.Token); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "email address restored; everyone was signed out and the account's credentials removed: sign in with an emailed link"})
	return nil
}
