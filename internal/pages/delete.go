package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// handleDeletePage handles "GET /account/delete": what deleting removes,
// and a form that asks for the address to be typed.
func (h *handlers) handleDeletePage(w http.ResponseWriter, r *http.Request) {
	if c := h.caller(w, r); c != nil {
		h.render(w, r, http.StatusOK, "delete", c.page(r, "Delete your account", "profile"))
	}
}

// handleDelete handles "POST /account/delete". A sole owner of a workspace
// that has other members is told how to hand it over (the service's 409).
func (h *handlers) handleDelete(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	p := c.page(r, "Delete your account", "profile")
	typed := r.PostFormValue("confirm")
	if !strings.EqualFold(strings.TrimSpace(typed), c.b.User.Email) {
		p.Values = map[string]string{"confirm": typed}
		p.Fields = map[string]string{"confirm": tr(r, "Type your email address, %s, to confirm.", c.b.User.Email)}
		h.render(w, r, http.StatusBadRequest, "delete", p)
		return
	}
	err := h.svc.DeleteAccount(r.Context(), c.p)
	if gatehouse.ErrorKind(err) == gatehouse.KindConflict {
		p.Data = errorText(langOf(r), sentence(err.(*gatehouse.Error).Message))
		h.render(w, r, http.StatusConflict, "delete", p)
		return
	}
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	h.setCookie(w, h.sessionCookieName(), "", -1)
	http.Redirect(w, r, "/signin?done=deleted", http.StatusSeeOther)
}
