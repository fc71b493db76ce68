package pages

import "net/http"

// handleMagicPage handles "GET /auth/magic?token=…". It only shows a
// button: mail scanners open links, so the token is consumed on POST.
func (h *handlers) handleMagicPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "confirm", &page{Title: tr(r, "Sign in to %s", h.brand.Name), Message: "Continue to sign in with the link from your email.",
		Action: "/auth/magic", Token: r.URL.Query().Get("token"), Button: "Sign in"})
}

// handleMagic handles "POST /auth/magic": consumes the link, starts the
// browser session and continues where the sign-in began.
func (h *handlers) handleMagic(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	si, err := h.svc.VerifyMagicLink(r.Context(), r.PostFormValue("token"), h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	next := ""
	if c, err := r.Cookie(h.hostCookie(cookieNext)); err == nil {
		next = c.Value
	}
	h.signedIn(w, r, si, next)
	return nil
}
