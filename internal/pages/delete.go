package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "deleted", Text: "Your account was deleted."},
}.add()

// deletePage is "GET /account/delete": what deleting removes, and a form
// that asks for the address to be typed.
func (h *handlers) deletePage(r *http.Request, c *caller) (*page, error) {
	return c.page(r, "Delete your account", "profile"), nil
}

// handleDelete handles "POST /account/delete". A sole owner of a workspace
// that has other members is told how to hand it over (the service's 409).
func (h *handlers) handleDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	p := c.page(r, "Delete your account", "profile")
	typed := r.PostFormValue("confirm")
	if !strings.EqualFold(strings.TrimSpace(typed), c.b.User.Email) {
		p.Values = map[string]string{"confirm": typed}
		p.Fields = map[string]string{"confirm": tr(r, "Type your email address, %s, to confirm.", c.b.User.Email)}
		h.render(w, r, http.StatusBadRequest, "delete", p)
		return nil
	}
	err := h.svc.DeleteAccount(r.Context(), c.p)
	if gatehouse.ErrorKind(err) == gatehouse.KindConflict {
		p.Data = errorText(langOf(r), sentence(err.(*gatehouse.Error).Message))
		h.render(w, r, http.StatusConflict, "delete", p)
		return nil
	}
	if err != nil {
		return err
	}
	h.setCookie(w, h.sessionCookieName(), "", -1)
	http.Redirect(w, r, "/signin?done=deleted", http.StatusSeeOther)
	return nil
}
