package pages

import (
	"net/http"
	"net/url"
)

// handleSignOut handles "POST /signout"; a next (the consent page's "Use
// another account") is where the sign-in page then returns.
func (h *handlers) handleSignOut(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(h.sessionCookieName()); err == nil && c.Value != "" {
		if err := h.svc.Logout(r.Context(), c.Value); err != nil {
			return err
		}
	}
	h.setCookie(w, h.sessionCookieName(), "", -1)
	to := "/signin"
	if next := r.PostFormValue("next"); next != "" {
		// "Use another account": sign in again and go back.
		to += "?" + url.Values{"next": {safeNext(next)}}.Encode()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}
