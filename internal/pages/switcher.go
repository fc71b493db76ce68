package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// A sense of place (issue 30 item 5): every console page's header lists
// the person's workspaces, the personal one included and marked, as links
// in a details element (no script needed), naming the workspace the page
// is about. Opening a workspace changes nothing: the default changes only
// by "Make default" on the workspaces page.

// switcher is the header's workspace list.
type switcher struct {
	// Here is the workspace the page is about, nil on the account pages.
	Here   *place
	Places []place
}

// place is one workspace of the switcher.
type place struct {
	ID, Name                   string
	Personal, Default, Current bool
}

// switcher lists c's workspaces for the header, marking the one of the
// page's path; nil when they cannot be read (the page shows without it).
func (h *handlers) switcher(r *http.Request, c *caller) *switcher {
	orgs, def, err := h.svc.OrgsOf(r.Context(), c.b.User)
	if err != nil {
		h.log.Warn("workspace switcher", "request_id", h.k.RequestID(r), "err", err)
		return nil
	}
	here := ""
	if rest, ok := strings.CutPrefix(r.URL.Path, "/workspaces/"); ok {
		here, _, _ = strings.Cut(rest, "/")
	}
	s := &switcher{Places: make([]place, 0, len(orgs))}
	for _, o := range orgs {
		s.Places = append(s.Places, place{ID: o.ID, Name: o.Name, Personal: o.Kind == workspace.OrgPersonal, Default: o.ID == def, Current: o.ID == here})
	}
	for i := range s.Places {
		if s.Places[i].Current {
			s.Here = &s.Places[i]
		}
	}
	return s
}
