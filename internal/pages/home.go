package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// homeData is what the console home shows.
type homeData struct {
	Orgs      []workspace.OrgListing
	DefaultID string
}

// handleHome handles "GET /": the sign-in page for an anonymous browser,
// the console home for a signed-in one.
func (h *handlers) handleHome(w http.ResponseWriter, r *http.Request) {
	c, err := h.lookup(r)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	if c == nil {
		h.render(w, http.StatusOK, "signin", &page{Title: "Sign in", Next: "/", Script: passkeyScriptPath})
		return
	}
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	p := c.page(r, "Welcome, "+c.b.User.Name, "home")
	p.Data = homeData{Orgs: orgs, DefaultID: def}
	h.render(w, http.StatusOK, "home", p)
}
