package pages

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/workspace"

	"golang.org/x/text/language"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "role", Text: "Role changed."},
	{Key: "removed", Text: "Member removed.", Named: "%s was removed from the workspace."},
}.add()

// errOrgNotFound answers a workspace page of an org the caller is not in.
var errOrgNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")

// membersPerPage is how many members one page of the directory lists.
const membersPerPage = 50

// memberRow is one member as the members page lists them, with what the
// caller may do to them (from the workspace's role table, not decided here).
// Its fields are its own, not an embedded PersonRow's, and the join date is
// formatted here: the template looks fields up by name per row, and through
// an embedded struct that lookup was a tenth of the page's time.
type memberRow struct {
	UserID, Name, Email, Role, Joined string
	Self, CanManage                   bool
}

// membersData is the members page's data. Total is shown only when
// Counted: the whole directory's count comes with the workspace's listing;
// a search's only when it fits on its first page (nothing else counts).
type membersData struct {
	Org     workspace.OrgListing
	Members []memberRow
	Roles   []string // the roles the caller may give
	// RoleOptions is the role select's options with each role selected,
	// written once per page rather than per row (the template's per-row
	// loop over Roles was a third of the page's render).
	RoleOptions map[string]template.HTML
	Query       string
	Page        int
	PrevPage    string
	NextPage    string
	Total       int
	Counted     bool
	CanManage   bool
	Links       []orgLink
	Here        string
}

// orgOf is the caller's listing of org id; not a member reads as not found.
func (h *handlers) orgOf(r *http.Request, c *caller, id string) (*workspace.OrgListing, error) {
	o, err := h.svc.MyOrg(r.Context(), c.p, id)
	if err == nil && o == nil {
		err = errOrgNotFound
	}
	return o, err
}

// membersPage is "GET /workspaces/{id}/members": one page of workspace o's
// directory, searched by q, both done by the store (MemberPage), with what
// the caller may do to each member (the workspace's capabilities).
func (h *handlers) membersPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	d := membersData{Org: *o, Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	d.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	d.Page = max(1, min(d.Page, 100000))
	ms, more, err := h.memberRows(r, c, &d, parseCursor(r.URL.Query().Get("after")))
	if err != nil {
		return nil, err
	}
	caps := o.Capabilities()
	d.CanManage = caps.Can(workspace.PermMembers)
	d.Roles = caps.AssignableRoles()
	d.RoleOptions = roleOptions(langOf(r), d.Roles)
	for _, m := range ms {
		self := m.UserID == c.b.User.ID
		d.Members = append(d.Members, memberRow{UserID: m.UserID, Name: m.Name, Email: m.Email, Role: m.Role,
			Joined: i18n.Date(langOf(r), m.JoinedAt), Self: self, CanManage: !self && caps.Remove(m.Role)})
	}
	link := func(n int, after string) string {
		v := url.Values{"q": {d.Query}, "page": {strconv.Itoa(n)}}
		if after != "" {
			v.Set("after", after)
		}
		return "?" + v.Encode()
	}
	if d.Page > 1 {
		d.PrevPage = link(d.Page-1, "")
	}
	if more {
		last := ms[len(ms)-1]
		d.NextPage = link(d.Page+1, strconv.FormatInt(last.JoinedAt.UnixMicro(), 10)+"."+last.UserID)
	}
	d.Links, d.Here = orgLinks(o), "members"
	p := c.page(r, tr(r, "%s: members", o.Name), "workspaces")
	p.Data = d
	return p, nil
}

// memberRows reads d's page of the directory: after the cursor when there
// is one (the next-page links carry it), else by d.Page's offset; a page
// past the end is the last page, found by counting (the one rare count).
// It sets d.Total and d.Counted when the total is known for free.
func (h *handlers) memberRows(r *http.Request, c *caller, d *membersData, after *workspace.MemberCursor) ([]workspace.PersonRow, bool, error) {
	f := workspace.MemberFilter{Query: d.Query, Limit: membersPerPage, Offset: (d.Page - 1) * membersPerPage, After: after}
	ms, more, err := h.ws.MemberPage(r.Context(), c.p, d.Org.ID, f)
	if err != nil {
		return nil, false, err
	}
	if d.Query == "" {
		d.Total, d.Counted = d.Org.MemberCount, true
	} else if d.Page == 1 && !more {
		d.Total, d.Counted = len(ms), true
	}
	if len(ms) > 0 || d.Page == 1 {
		return ms, more, nil
	}
	if !d.Counted {
		if d.Total, err = h.ws.CountMembers(r.Context(), c.p, d.Org.ID, d.Query); err != nil {
			return nil, false, err
		}
		d.Counted = true
	}
	if d.Total == 0 {
		d.Page = 1
		return nil, false, nil
	}
	d.Page = (d.Total + membersPerPage - 1) / membersPerPage
	f.After, f.Offset = nil, (d.Page-1)*membersPerPage
	return h.ws.MemberPage(r.Context(), c.p, d.Org.ID, f)
}

// parseCursor reads a next-page link's "after" value, "<joined µs>.<user
// id>"; anything else is no cursor (the page number's offset is used).
func parseCursor(s string) *workspace.MemberCursor {
	at, id, ok := strings.Cut(s, ".")
	us, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || !gatehouse.IsID(id) {
		return nil
	}
	return &workspace.MemberCursor{JoinedAt: time.UnixMicro(us), UserID: id}
}

// roleOptions is, for each role a member may have, the <option>s of roles
// with that one selected.
func roleOptions(lang language.Tag, roles []string) map[string]template.HTML {
	out := map[string]template.HTML{}
	for _, has := range []string{workspace.RoleOwner, workspace.RoleAdmin, workspace.RoleBilling, workspace.RoleMember} {
		var b strings.Builder
		for _, r := range roles {
			sel := ""
			if r == has {
				sel = " selected"
			}
			fmt.Fprintf(&b, "<option value=\"%s\"%s>%s</option>\n", template.HTMLEscapeString(r), sel, template.HTMLEscapeString(i18n.Term(lang, r)))
		}
		out[has] = template.HTML(b.String()) // each role escaped above
	}
	return out
}

// handleMemberRole handles "POST /workspaces/{id}/members/role"; the
// workspace decides who may (403) and keeps an owner (409).
func (h *handlers) handleMemberRole(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	if err := h.ws.SetMemberRole(r.Context(), c.p, id, r.PostFormValue("user_id"), r.PostFormValue("role")); err != nil {
		return h.refusedIn(r, c, "members", h.membersPage, err, nil)
	}
	done(w, r, "/workspaces/"+id+"/members", "role")
	return nil
}

// handleMemberRemove handles "POST /workspaces/{id}/members/remove".
func (h *handlers) handleMemberRemove(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, userID := r.PathValue("id"), r.PostFormValue("user_id")
	people, err := h.ws.OrgMembers(r.Context(), c.p, id)
	if err != nil {
		return h.refusedIn(r, c, "members", h.membersPage, err, nil)
	}
	name := "this member"
	for _, m := range people {
		if m.UserID == userID {
			name = personName(m)
		}
	}
	if !h.confirmed(w, r, c, "", confirmStep{Title: tr(r, "Remove %s?", name),
		Message: tr(r, "%s loses access to this workspace, its teams and its tools. To come back, they need a new invitation.", name),
		Button:  "Remove from the workspace", Back: "/workspaces/" + id + "/members"}) {
		return nil
	}
	if err := h.ws.RemoveMember(r.Context(), c.p, id, userID); err != nil {
		return h.refusedIn(r, c, "members", h.membersPage, err, nil)
	}
	h.doneNamed(w, r, "/workspaces/"+id+"/members", "removed", name)
	return nil
}
