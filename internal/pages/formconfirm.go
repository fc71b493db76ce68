package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

// confirmAction is the confirmation form's target, relative to the page
// ({forms_url}/confirm), so it works wherever the forms URL is served.
var confirmAction = strings.TrimPrefix(forms.ConfirmPath, "/")

// handleFormConfirmPage handles "GET /forms/confirm?token=…", the link
// mailed to a new destination address. It only shows a button: mail
// scanners open links, so the address is confirmed on POST.
func (h *handlers) handleFormConfirmPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "confirm", &page{Title: "Receive form submissions",
		Message: "Confirm that you want the submissions of a form mailed to this address.",
		Action:  confirmAction, Token: r.URL.Query().Get("token"), Button: "Send me the submissions"})
}

// handleFormConfirm handles "POST /forms/confirm".
func (h *handlers) handleFormConfirm(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	rec, f, err := h.forms.ConfirmRecipient(r.Context(), r.PostFormValue("token"))
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Address confirmed",
		Message: tr(r, "%s will receive the submissions of the form %s. You can close this page.", rec.Email, f.Name)})
	return nil
}
