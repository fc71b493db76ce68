package web

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
func (s *Server) handleFormConfirmPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "confirm", &page{Title: "Receive form submissions",
		Message: "Confirm that you want the submissions of a form mailed to this address.",
		Action:  confirmAction, Token: r.URL.Query().Get("token"), Button: "Send me the submissions"})
}

// handleFormConfirm handles "POST /forms/confirm".
func (s *Server) handleFormConfirm(w http.ResponseWriter, r *http.Request) {
	if s.pageLimited(r, func(l *limits) bool { ok, _ := l.verify.Allow(clientIP(r)); return ok }) {
		s.render(w, http.StatusTooManyRequests, "error", &page{Title: "Too many attempts", Message: "Wait a moment and try again."})
		return
	}
	rec, f, err := s.forms.ConfirmRecipient(r.Context(), r.PostFormValue("token"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "message", &page{Title: "Address confirmed",
		Message: rec.Email + " will receive the submissions of the form " + f.Name + ". You can close this page."})
}
