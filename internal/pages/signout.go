package pages

import "net/http"

// handleSignOut handles "POST /signout".
func (h *handlers) handleSignOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(h.sessionCookieName()); err == nil && c.Value != "" {
		if err := h.svc.Logout(r.Context(), c.Value); err != nil {
			h.pageError(w, r, err)
			return
		}
	}
	h.setCookie(w, h.sessionCookieName(), "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}
