package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// consent renders the consent page: the client, and the user's workspaces
// to pick one from (the default one preselected).
func (h *handlers) consent(w http.ResponseWriter, r *http.Request, b *identity.BrowserSession, title string, c *oauth.Client,
	action string, params url.Values, target, problem string) {
	orgs, def, err := h.svc.UserWorkspaces(r.Context(), b.User.ID)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	p := &page{Title: title, User: b.User, ClientName: c.DisplayName(), Action: action, formTarget: target, Error: problem,
		Next: action + "?" + params.Encode()} // "Not you?" signs out and comes back here
	if strings.Contains(c.ID, "://") {
		if u, err := url.Parse(c.ID); err == nil {
			p.ClientName += " from " + u.Host
		}
	}
	if u, err := url.Parse(params.Get("redirect_uri")); err == nil && u.Host != "" {
		p.ClientHost = u.Host
	}
	for k, v := range params {
		p.Hidden = append(p.Hidden, hidden{k, v[0]})
	}
	sortHidden(p.Hidden)
	for _, o := range orgs {
		p.Orgs = append(p.Orgs, orgChoice{ID: o.ID, Name: o.Name, Kind: o.Kind, Role: o.Role, Checked: o.ID == def})
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusBadRequest
	}
	h.render(w, status, "consent", p)
}

// sortHidden orders the hidden fields by name, so a page is the same
// for the same request.
func sortHidden(hs []hidden) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && hs[j].Name < hs[j-1].Name; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}
