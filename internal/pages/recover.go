package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// handleRecoverPage handles "GET /recover", the form that asks for a
// password-reset link (linked from the sign-in page).
func (h *handlers) handleRecoverPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusOK, "recover", &page{Title: "Forgot your password?", Email: h.prefill(w, r, "/recover")})
}

// handleRecover handles "POST /recover": the API's request with its
// limits, and the same answer for every well-formed address.
func (h *handlers) handleRecover(w http.ResponseWriter, r *http.Request) {
	email := r.PostFormValue("email")
	key, display, err := gatehouse.ParseEmail(email)
	if err != nil {
		h.render(w, http.StatusBadRequest, "recover", &page{Title: "Forgot your password?", Email: email, Error: sentence(err.(*gatehouse.Error).Message)})
		return
	}
	okIP, _ := h.recover.Allow(h.k.ClientIP(r))
	okMail, _ := h.recoverPerEmail.Allow(key)
	if !okIP || !okMail {
		h.render(w, http.StatusTooManyRequests, "recover", &page{Title: "Forgot your password?", Email: email,
			Error: "Too many links requested. Wait a few minutes and try again."})
		return
	}
	if err := h.svc.RequestRecovery(r.Context(), email); err != nil {
		h.pageError(w, r, err)
		return
	}
	h.render(w, http.StatusOK, "message", &page{Title: "Check your email",
		Message: "If " + display + " has an account, a link to choose a new password is on its way. It works once, within 1 hour."})
}

// handleResetPage handles "GET /reset-password?token=…": the form for
// the new password. Only the POST uses the link (mail scanners open
// links).
func (h *handlers) handleResetPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusOK, "reset", &page{Title: "Choose a new password", Token: r.URL.Query().Get("token")})
}

// handleReset handles "POST /reset-password": sets the password, starts
// the browser session and lands on the sign-in page. A password the
// policy refuses shows the form again with the reason (the link still
// works); a bad link shows the error page.
func (h *handlers) handleReset(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.verify) {
		h.tooMany(w)
		return
	}
	tok := r.PostFormValue("token")
	si, err := h.svc.ResetPassword(r.Context(), tok, r.PostFormValue("new_password"), h.k.SessionMeta(r))
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind == gatehouse.KindInvalid && tok != "" {
		msg := sentence(strings.Replace(e.Message, "new_password", "the new password", 1))
		h.render(w, http.StatusBadRequest, "reset", &page{Title: "Choose a new password", Token: tok, Error: msg})
		return
	}
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	h.signedIn(w, r, si, "")
}
