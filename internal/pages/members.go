package pages

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// errOrgNotFound answers a workspace page of an org the caller is not in.
var errOrgNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")

// membersPerPage is how many members one page of the directory lists.
const membersPerPage = 50

// memberRow is one member as the members page lists them, with what the
// caller may do to them (from the workspace's role table, not decided here).
type memberRow struct {
	workspace.PersonRow
	Self, CanManage bool
}

// membersData is the members page's data.
type membersData struct {
	Org       workspace.OrgListing
	Members   []memberRow
	Roles     []string // the roles the caller may give
	Query     string
	Page      int
	PrevPage  string
	NextPage  string
	Total     int
	CanManage bool
	Links     []orgLink
	Here      string
}

// orgOf is the caller's listing of org id; not a member reads as not found.
func (h *handlers) orgOf(r *http.Request, c *caller, id string) (*workspace.OrgListing, error) {
	o, err := h.svc.MyOrg(r.Context(), c.p, id)
	if err == nil && o == nil {
		err = errOrgNotFound
	}
	return o, err
}

// membersPage builds the members page of org id: one page of its
// directory, searched by q, both done by the store (MemberPage).
func (h *handlers) membersPage(w http.ResponseWriter, r *http.Request, c *caller, id string) (*page, bool) {
	o, err := h.orgOf(r, c, id)
	d := membersData{Org: *orgOrEmpty(o), Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	d.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	d.Page = max(1, min(d.Page, 100000))
	var ms []workspace.PersonRow
	if err == nil {
		ms, d.Total, err = h.ws.MemberPage(r.Context(), c.p, id, workspace.MemberFilter{Query: d.Query, Limit: membersPerPage, Offset: (d.Page - 1) * membersPerPage})
	}
	if err == nil && len(ms) == 0 && d.Total > 0 { // past the end: the last page
		d.Page = (d.Total + membersPerPage - 1) / membersPerPage
		ms, d.Total, err = h.ws.MemberPage(r.Context(), c.p, id, workspace.MemberFilter{Query: d.Query, Limit: membersPerPage, Offset: (d.Page - 1) * membersPerPage})
	}
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	d.CanManage = workspace.RoleHas(o.Role, workspace.PermMembers)
	owners := workspace.RoleHas(o.Role, workspace.PermOwners)
	for _, role := range []string{workspace.RoleOwner, workspace.RoleAdmin, workspace.RoleBilling, workspace.RoleMember} {
		if role != workspace.RoleOwner || owners {
			d.Roles = append(d.Roles, role)
		}
	}
	for _, m := range ms {
		self := m.UserID == c.b.User.ID
		d.Members = append(d.Members, memberRow{PersonRow: m, Self: self,
			CanManage: d.CanManage && !self && (m.Role != workspace.RoleOwner || owners)})
	}
	link := func(n int) string {
		return "?" + url.Values{"q": {d.Query}, "page": {strconv.Itoa(n)}}.Encode()
	}
	if d.Page > 1 {
		d.PrevPage = link(d.Page - 1)
	}
	if d.Page*membersPerPage < d.Total {
		d.NextPage = link(d.Page + 1)
	}
	d.Links, d.Here = orgLinks(o), "members"
	p := c.page(r, o.Name+": members", "workspaces")
	p.Data = d
	return p, true
}

// orgOrEmpty is *o, or an empty listing when o is nil (an error page follows).
func orgOrEmpty(o *workspace.OrgListing) *workspace.OrgListing {
	if o == nil {
		return &workspace.OrgListing{}
	}
	return o
}

// handleMembersPage handles "GET /workspaces/{id}/members".
func (h *handlers) handleMembersPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	if p, ok := h.membersPage(w, r, c, r.PathValue("id")); ok {
		h.render(w, http.StatusOK, "members", p)
	}
}

// handleMemberRole handles "POST /workspaces/{id}/members/role"; the
// workspace decides who may (403) and keeps an owner (409).
func (h *handlers) handleMemberRole(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	if err := h.ws.SetMemberRole(r.Context(), c.p, id, r.PostFormValue("user_id"), r.PostFormValue("role")); err != nil {
		h.membersRefused(w, r, c, id, err)
		return
	}
	done(w, r, "/workspaces/"+id+"/members", "role")
}

// handleMemberRemove handles "POST /workspaces/{id}/members/remove".
func (h *handlers) handleMemberRemove(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	if err := h.ws.RemoveMember(r.Context(), c.p, id, r.PostFormValue("user_id")); err != nil {
		h.membersRefused(w, r, c, id, err)
		return
	}
	done(w, r, "/workspaces/"+id+"/members", "removed")
}

// membersRefused shows the members page again with the service's refusal
// above the list (a 404 or 403 of the workspace itself is the error page).
func (h *handlers) membersRefused(w http.ResponseWriter, r *http.Request, c *caller, id string, err error) {
	if p, ok := h.membersPage(w, asGet(r), c, id); ok {
		h.refuse(w, r, "members", p, err, nil)
	}
}
