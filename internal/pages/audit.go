package pages

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// auditRow is one audit entry as the audit page and its CSV show it:
// labels and names, never a bare id.
type auditRow struct {
	At                  time.Time
	Tool, Action, Label string
	Actor, Target       string
	Meta                []metaPair // the entry's meta as readable pairs
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
	Actions                    []actionGroup // the actions it offers, by tool
	Tool, Action, Actor, Limit string
	From, To                   string // the date range's days (YYYY-MM-DD, UTC), as typed
	CSV                        string // the CSV export of the filtered view
	DefaultLimit, MaxLim       int
}

// actorOption is one choice of the audit page's actor and action filters.
type actorOption struct{ Value, Label string }

// actionGroup is the actions of one tool the action filter offers.
type actionGroup struct {
	Tool    string
	Actions []actorOption
}

// auditDay is the form of the date range's days.
const auditDay = "2006-01-02"

// auditFilter reads the audit page's filters from q: the range's days are
// UTC days, both included.
func auditFilter(q url.Values) (workspace.AuditFilter, error) {
	f := workspace.AuditFilter{Tool: q.Get("tool"), Action: strings.TrimSpace(q.Get("action")), Actor: q.Get("actor")}
	for _, b := range []struct {
		name string
		t    *time.Time
		add  int
	}{{"from", &f.From, 0}, {"to", &f.To, 1}} {
		v := strings.TrimSpace(q.Get(b.name))
		if v == "" {
			continue
		}
		d, err := time.Parse(auditDay, v)
		if err != nil {
			return f, gatehouse.InvalidField(b.name, "%s must be a date such as 2026-01-31", b.name)
		}
		*b.t = d.AddDate(0, 0, b.add)
	}
	return f, nil
}

// auditView reads the entries of the audit page of o that r's filters
// select, with their names resolved in one read; d is the page's data.
func (h *handlers) auditView(r *http.Request, c *caller, o *workspace.OrgListing) (*auditData, error) {
	q := r.URL.Query()
	d := &auditData{Org: *o, Links: orgLinks(o), Here: "audit", Tool: q.Get("tool"), Action: strings.TrimSpace(q.Get("action")),
		Actor: q.Get("actor"), Limit: q.Get("limit"), From: q.Get("from"), To: q.Get("to"),
		DefaultLimit: workspace.AuditDefaultLimit, MaxLim: workspace.AuditMaxLimit}
	f, err := auditFilter(q)
	if err != nil {
		return d, err
	}
	entries, tools, err := h.ws.AuditLog(r.Context(), c.p, o.ID, f, d.Limit)
	if err != nil {
		return d, err
	}
	names, err := h.ws.AuditNames(r.Context(), o.ID, entries)
	if err != nil {
		return d, err
	}
	if d.Actors, err = h.auditActors(r, c, o); err != nil {
		return d, err
	}
	d.Tools, d.Actions = tools, actionGroups(tools, d.Action)
	for _, e := range entries {
		meta := entryMeta(e.Meta)
		d.Rows = append(d.Rows, auditRow{At: e.At, Tool: e.Tool, Action: e.Action, Label: auditLabel(e.Tool, e.Action),
			Actor: actorName(e.ActorID, names), Target: targetName(e, meta, names), Meta: readableMeta(meta, names)})
	}
	keep := url.Values{}
	for _, k := range []string{"tool", "action", "actor", "from", "to", "limit"} {
		if v := q.Get(k); v != "" {
			keep.Set(k, v)
		}
	}
	d.CSV = "/workspaces/" + o.ID + "/audit.csv"
	if len(keep) > 0 {
		d.CSV += "?" + keep.Encode()
	}
	return d, nil
}

// handleAuditPage handles "GET /workspaces/{id}/audit": the newest entries,
// filtered by tool, action, actor and days, up to limit; AuditLog decides
// who may read it (403) and checks the filters (400, shown next to their
// fields).
func (h *handlers) handleAuditPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.auditPage(r, c, o)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "audit", p)
	return nil
}

// auditPage is the audit page r asks for, its view read; a refused filter
// is a refusal shown on the page, with the filters as typed.
func (h *handlers) auditPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	d, err := h.auditView(r, c, o)
	p := c.page(r, tr(r, "%s: audit log", o.Name), "workspaces")
	p.Data = d
	if err != nil {
		return nil, auditRefused(p, d, err)
	}
	return p, nil
}

// auditRefused is a refused audit view: a filter's error next to its
// field, on the page with the filters as typed; any other, the error page.
func auditRefused(p *page, d *auditData, err error) error {
	if e := (*gatehouse.Error)(nil); !errors.As(err, &e) || e.Kind != gatehouse.KindInvalid {
		return err
	}
	if d.Actors == nil {
		d.Actors = []actorOption{{"", "Anyone"}}
	}
	d.Actions = actionGroups(nil, d.Action)
	return refused("audit", p, err, map[string]string{"limit": d.Limit}, "limit", "actor", "from", "to")
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
		out = append(out, actorOption{a, "The chosen person or token"}) // a deleted token's, or a person's, chosen by URL
	}
	return out, nil
}

// actionGroups are the actions the action filter offers: the labelled
// actions of identity and of the tools in the log, by tool and label, and
// chosen when the table lacks it.
func actionGroups(tools []string, chosen string) []actionGroup {
	byTool := map[string][]actorOption{}
	for a, label := range auditLabels {
		tool, _, _ := strings.Cut(a, ".")
		if tool == "*" {
			for _, t := range tools {
				if t != "identity" {
					byTool[t] = append(byTool[t], actorOption{t + strings.TrimPrefix(a, "*"), label})
				}
			}
			continue
		}
		if tool == "identity" || slices.Contains(tools, tool) {
			byTool[tool] = append(byTool[tool], actorOption{a, label})
		}
	}
	var out []actionGroup
	known := chosen == ""
	for _, t := range slices.Sorted(maps.Keys(byTool)) {
		opts := byTool[t]
		slices.SortFunc(opts, func(a, b actorOption) int { return cmp.Compare(a.Label, b.Label) })
		known = known || slices.ContainsFunc(opts, func(o actorOption) bool { return o.Value == chosen })
		out = append(out, actionGroup{t, opts})
	}
	if !known {
		out = append(out, actionGroup{"other", []actorOption{{chosen, chosen}}})
	}
	return out
}

// actorName is who an entry names as its actor, as they are named now.
func actorName(id string, names map[workspace.AuditRef]string) string {
	switch {
	case id == "":
		return "Gatehouse"
	case id == identity.ActorSystem:
		return "An operator (command line)"
	case strings.HasPrefix(id, workspace.ActorSCIM+":"):
		if n := names[workspace.AuditRef{Type: "scim_token", ID: strings.TrimPrefix(id, workspace.ActorSCIM+":")}]; n != "" {
			return "SCIM token “" + n + "”"
		}
		return "Deleted SCIM token"
	case names[workspace.AuditRef{Type: "user", ID: id}] != "":
		return names[workspace.AuditRef{Type: "user", ID: id}]
	}
	return "Deleted person"
}

// targetNouns name the kinds of thing an entry is about.
var targetNouns = map[string]string{"user": "person", "team": "team", "api_key": "key", "scim_token": "SCIM token",
	"application": "application", "sso_connection": "single sign-on connection", "domain": "domain", "org": "workspace",
	"invitation": "invitation", "session": "session", "grant": "connected application", "passkey": "passkey",
	"scim_user": "directory user", "tool": "tool", "webhook": "webhook", "document": "document", "issue": "issue",
	"link": "short link", "conversion": "conversion", "form": "form", "destination": "form destination", "submission": "submission"}

// targetName is what an entry is about: its name now; a thing gone since,
// by the name its entry recorded when it has one; else its kind only.
func targetName(e gatehouse.AuditEntry, meta map[string]string, names map[workspace.AuditRef]string) string {
	if e.TargetType == "" {
		return ""
	}
	noun := cmp.Or(targetNouns[e.TargetType], strings.ReplaceAll(e.TargetType, "_", " "))
	if n := names[workspace.AuditRef{Type: e.TargetType, ID: e.TargetID}]; n != "" {
		return noun + " “" + n + "”"
	}
	if e.TargetType == "tool" && e.TargetID != "" {
		return noun + " “" + e.TargetID + "”"
	}
	recorded := cmp.Or(meta["name"], meta["domain"], meta["email"], meta["user_name"], meta["shortCode"], meta["title"])
	if workspace.AuditNamed(e.TargetType) {
		if recorded != "" {
			return "deleted " + noun + " “" + recorded + "”"
		}
		return "deleted " + noun
	}
	if recorded != "" {
		return noun + " “" + recorded + "”"
	}
	if n := meta["number"]; n != "" {
		return noun + " #" + n
	}
	return noun
}

// entryMeta is an entry's meta (a JSON object) as strings by key: strings
// as they are, other values as compact JSON.
func entryMeta(meta string) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(meta), &m) != nil {
		if meta == "" || meta == "{}" {
			return nil
		}
		return map[string]string{"meta": meta}
	}
	out := map[string]string{}
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = fmt.Sprint(string(raw))
		}
		out[k] = s
	}
	return out
}

// readableMeta is an entry's meta as pairs sorted by key, with no bare
// id: a "<kind>_id" AuditNames resolves is shown by the thing's name (or as
// deleted), any other id left out.
func readableMeta(meta map[string]string, names map[workspace.AuditRef]string) []metaPair {
	var out []metaPair
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		v := meta[k]
		if kind, ok := strings.CutSuffix(k, "_id"); ok && workspace.AuditNamed(kind) && gatehouse.IsID(v) {
			noun := cmp.Or(targetNouns[kind], kind)
			if n := names[workspace.AuditRef{Type: kind, ID: v}]; n != "" {
				out = append(out, metaPair{noun, n})
			} else {
				out = append(out, metaPair{noun, "deleted " + noun})
			}
			continue
		}
		if gatehouse.IsID(v) {
			continue
		}
		out = append(out, metaPair{strings.ReplaceAll(k, "_", " "), v})
	}
	return out
}
