package pages

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// auditRow is one audit entry as the audit page shows it.
type auditRow struct {
	gatehouse.AuditEntry
	Actor string     // the actor's name, or their id when the user is gone
	Meta  []metaPair // the entry's meta as readable pairs
}

// metaPair is one field of an entry's meta.
type metaPair struct{ Key, Value string }

// auditData is the audit page's data.
type auditData struct {
	Org                        workspace.OrgListing
	Links                      []orgLink
	Here                       string
	Rows                       []auditRow
	Tools                      []string
	Actors                     []actorOption // the actors the page offers to filter by
	Tool, Action, Actor, Limit string
	DefaultLimit, MaxLim       int
}

// actorOption is one choice of the audit page's actor filter.
type actorOption struct{ Value, Label string }

// handleAuditPage handles "GET /workspaces/{id}/audit": the newest entries,
// filtered by tool and action, up to limit; AuditLog decides who may read
// it (403) and checks the limit (400, shown next to its field).
func (h *handlers) handleAuditPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	o := h.orgPage(w, r, c)
	if o == nil {
		return
	}
	q := r.URL.Query()
	d := auditData{Org: *o, Links: orgLinks(o), Here: "audit", Tool: q.Get("tool"), Action: strings.TrimSpace(q.Get("action")),
		Actor: q.Get("actor"), Limit: q.Get("limit"), DefaultLimit: workspace.AuditDefaultLimit, MaxLim: workspace.AuditMaxLimit}
	f := workspace.AuditFilter{Tool: d.Tool, Action: d.Action, Actor: d.Actor}
	entries, tools, err := h.ws.AuditLog(r.Context(), c.p, o.ID, f, d.Limit)
	var names map[string]string
	if err == nil {
		names, err = h.ws.ActorNames(r.Context(), entries)
	}
	if err == nil {
		d.Actors, err = h.auditActors(r, c, o)
	}
	p := c.page(r, o.Name+": audit log", "workspaces")
	p.Data = &d
	if e := (*gatehouse.Error)(nil); errors.As(err, &e) && e.Kind == gatehouse.KindInvalid {
		h.refuse(w, r, "audit", p, err, map[string]string{"limit": d.Limit}, "limit", "actor")
		return
	} else if err != nil {
		h.pageError(w, r, err)
		return
	}
	d.Tools = tools
	for _, e := range entries {
		d.Rows = append(d.Rows, auditRow{AuditEntry: e, Actor: actorName(e.ActorID, names), Meta: readableMeta(e.Meta)})
	}
	h.render(w, http.StatusOK, "audit", p)
}

// auditActors are the actors the audit page of o offers: anyone, and on a
// team workspace with SCIM, every SCIM token and each live one.
func (h *handlers) auditActors(r *http.Request, c *caller, o *workspace.OrgListing) ([]actorOption, error) {
	out := []actorOption{{"", "Anyone"}}
	if h.scim == nil || o.Kind != workspace.OrgTeam {
		return out, nil
	}
	out = append(out, actorOption{workspace.ActorSCIM, "SCIM directory (every token)"})
	toks, err := h.scim.Tokens(r.Context(), c.p, o.ID)
	if e := (*gatehouse.Error)(nil); errors.As(err, &e) && e.Kind == gatehouse.KindForbidden {
		toks = nil // the log is readable without managing SCIM (a two-factor policy): no token names
	} else if err != nil {
		return nil, err
	}
	for _, t := range toks {
		out = append(out, actorOption{workspace.ActorSCIM + ":" + t.ID, "SCIM token " + t.Name})
	}
	if a := r.URL.Query().Get("actor"); a != "" && !slices.ContainsFunc(out, func(o actorOption) bool { return o.Value == a }) {
		out = append(out, actorOption{a, a}) // a deleted token's, or a person's, chosen by URL
	}
	return out, nil
}

// actorName is who an entry names as its actor.
func actorName(id string, names map[string]string) string {
	switch {
	case id == "":
		return "Gatehouse"
	case strings.HasPrefix(id, "scim:"):
		return "SCIM directory (token " + strings.TrimPrefix(id, "scim:") + ")"
	case names[id] != "":
		return names[id]
	}
	return id
}

// readableMeta is an entry's meta (a JSON object) as pairs sorted by key:
// strings as they are, other values as compact JSON.
func readableMeta(meta string) []metaPair {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(meta), &m) != nil {
		if meta == "" || meta == "{}" {
			return nil
		}
		return []metaPair{{"meta", meta}}
	}
	var out []metaPair
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = fmt.Sprint(string(raw))
		}
		out = append(out, metaPair{k, s})
	}
	slices.SortFunc(out, func(a, b metaPair) int { return strings.Compare(a.Key, b.Key) })
	return out
}
