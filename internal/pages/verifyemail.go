package pages

import "net/http"

// handleVerifyEmailPage handles "GET /verify-email?token=…" (confirm
// button; consumed on POST).
func (h *handlers) handleVerifyEmailPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusOK, "confirm", &page{Title: "Confirm your email address", Message: "Confirm that this address is yours and that you signed up for " + h.brand.Name + ". If you did not sign up, close this page: whoever did chose the password.",
		Action: "/verify-email", Token: r.URL.Query().Get("token"), Button: "Confirm my email address"})
}

// handleVerifyEmailForm handles "POST /verify-email".
func (h *handlers) handleVerifyEmailForm(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.verify) {
		h.tooMany(w)
		return
	}
	u, err := h.svc.VerifyEmail(r.Context(), r.PostFormValue("token"))
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	// A browser signed in to this account goes on to the console.
	if b, err := h.browser(r); err == nil && b != nil && b.User.ID == u.ID {
		done(w, r, "/", "email-checked")
		return
	}
	h.render(w, http.StatusOK, "message", &page{Title: "Email confirmed", Message: u.Email + " is confirmed.", Next: "/signin"})
}
