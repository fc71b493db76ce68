package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "disconnected", Text: "Application disconnected."},
}.add()

// appRow is one connected application with its workspace's name.
type appRow struct {
	identity.Grant
	Workspace string
}

// handleAppsPage handles "GET /account/apps": the OAuth grants.
func (h *handlers) handleAppsPage(w http.ResponseWriter, r *http.Request, c *caller) error {
	gs, err := h.svc.Grants(r.Context(), c.p)
	if err != nil {
		return err
	}
	orgs, _, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		return err
	}
	rows := make([]appRow, 0, len(gs))
	for _, g := range gs {
		rows = append(rows, appRow{Grant: g, Workspace: orgName(orgs, g.OrgID)})
	}
	p := c.page(r, "Connected apps", "apps")
	p.Data = rows
	h.render(w, r, http.StatusOK, "apps", p)
	return nil
}

// orgName is the name of org id among orgs, "a workspace you left" if none.
func orgName(orgs []workspace.OrgListing, id string) string {
	for _, o := range orgs {
		if o.ID == id {
			return o.Name
		}
	}
	return "a workspace you left"
}

// handleDisconnect handles "POST /account/apps/disconnect": revokes a grant.
func (h *handlers) handleDisconnect(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := h.svc.RevokeGrant(r.Context(), c.p, r.PostFormValue("id")); err != nil {
		return err
	}
	done(w, r, "/account/apps", "disconnected")
	return nil
}
