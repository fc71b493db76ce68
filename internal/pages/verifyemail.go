package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "email-checked", Text: "Email confirmed."},
}.add()

// handleVerifyEmailPage handles "GET /verify-email?token=…" (confirm
// button; consumed on POST). A link used already says so, and whether
// the address is confirmed, instead of offering the button again.
func (h *handlers) handleVerifyEmailPage(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if h.spentVerifyLink(w, r, tok) {
		return
	}
	h.render(w, r, http.StatusOK, "confirm", &page{Title: "Confirm your email address", Message: tr(r, "Confirm that this address is yours and that you signed up for %s. If you did not sign up, close this page: whoever did chose the password.", h.brand.Name),
		Action: "/verify-email", Token: tok, Button: "Confirm my email address"})
}

// handleVerifyEmailForm handles "POST /verify-email".
func (h *handlers) handleVerifyEmailForm(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	tok := r.PostFormValue("token")
	u, err := h.svc.VerifyEmail(r.Context(), tok)
	if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized && h.spentVerifyLink(w, r, tok) {
		return nil
	}
	if err != nil {
		return err
	}
	// A browser signed in to this account goes on to the console.
	if b, err := h.browser(r); err == nil && b != nil && b.User.ID == u.ID {
		done(w, r, "/", "email-checked")
		return nil
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Email confirmed", Message: tr(r, "%s is confirmed.", u.Email), Next: "/signin"})
	return nil
}

// spentVerifyLink answers for a confirmation link that was used (a
// second click) or has expired, saying which; false for any other link.
func (h *handlers) spentVerifyLink(w http.ResponseWriter, r *http.Request, tok string) bool {
	return h.spentLink(w, r, tok, identity.PurposeVerifyEmail, func(state identity.LinkState, confirmed bool) *page {
		p := &page{Title: "This link was used already", Next: "/", Button: "Go to your account"}
		switch {
		case state == identity.LinkUsed && confirmed:
			p.Message = "This confirmation link was used already: your email address is confirmed. There is nothing more to do."
		case state == identity.LinkUsed:
			p.Message = "This confirmation link was used already, or a newer link replaced it. To confirm your address, ask for a new link on your account page."
		case confirmed:
			p.Title, p.Message = "This link has expired", "This confirmation link has expired, but your email address is confirmed already. There is nothing more to do."
		default:
			p.Title, p.Message = "This link has expired", "This confirmation link has expired. Ask for a new one on your account page."
		}
		return p
	})
}

// spentLink answers 410 with the page say makes for a mailed link of
// purpose that was used (or replaced by a newer one) or has expired, and
// reports whether it did; any other link is left to the caller. Each link
// page says so before anyone presses a button or types into a form.
func (h *handlers) spentLink(w http.ResponseWriter, r *http.Request, tok, purpose string, say func(state identity.LinkState, confirmed bool) *page) bool {
	state, confirmed, err := h.svc.MailedLink(r.Context(), tok, purpose)
	if err != nil || (state != identity.LinkUsed && state != identity.LinkExpired) {
		return false
	}
	h.render(w, r, http.StatusGone, "message", say(state, confirmed))
	return true
}
