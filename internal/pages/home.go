package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// homeData is what the console home shows.
type homeData struct {
	Orgs      []workspace.OrgListing
	DefaultID string
	// Offer is the workspace a verified claim on the person's email
	// domain suggests to them (workspace.Discoverable), nil for none.
	Offer *workspace.DomainOffer
}

// handleHome handles "GET /": the sign-in page for an anonymous browser,
// the console home for a signed-in one.
func (h *handlers) handleHome(w http.ResponseWriter, r *http.Request) error {
	c, err := h.lookup(r)
	if err != nil {
		return err
	}
	if c == nil {
		h.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Next: "/", Script: passkeyScriptPath})
		return nil
	}
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		return err
	}
	offer, err := h.ws.Discoverable(r.Context(), c.p)
	if err != nil {
		return err
	}
	p := c.page(r, tr(r, "Welcome, %s", c.b.User.Name), "home")
	p.Data = homeData{Orgs: orgs, DefaultID: def, Offer: offer}
	h.render(w, r, http.StatusOK, "home", p)
	return nil
}

// handleJoinDiscoverable handles "POST /join": joins the workspace the
// home page offers, in one step; JoinDiscoverable decides (the address
// confirmed, a suggest-mode claim on its domain) and makes it the default
// workspace, as the API's join does and the offer says.
func (h *handlers) handleJoinDiscoverable(w http.ResponseWriter, r *http.Request, c *caller) error {
	ot, err := h.ws.JoinDiscoverable(r.Context(), c.p)
	if err != nil {
		return err
	}
	done(w, r, "/workspaces/"+ot.Org.ID, "joined")
	return nil
}
