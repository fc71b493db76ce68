package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// invitationsData is the invitations page's data.
type invitationsData struct {
	Org         workspace.OrgListing
	Invitations []*workspace.Invitation
	// NewLink is a link invitation's URL right after it was created (shown once).
	NewLink string
	Links   []orgLink
	Here    string
}

// invitationsPage builds the invitations page of org id; the workspace
// answers 403 to a role that may not manage members.
func (h *handlers) invitationsPage(w http.ResponseWriter, r *http.Request, c *caller, id string) (*page, bool) {
	o, err := h.orgOf(r, c, id)
	var invs []*workspace.Invitation
	if err == nil {
		invs, err = h.ws.Invitations(r.Context(), c.p, id)
	}
	if err != nil {
		h.pageError(w, r, err)
		return nil, false
	}
	p := c.page(r, tr(r, "%s: invitations", o.Name), "workspaces")
	p.Data = &invitationsData{Org: *o, Invitations: invs, Links: orgLinks(o), Here: "invitations"}
	p.Values = map[string]string{"role": workspace.RoleMember}
	return p, true
}

// handleInvitationsPage handles "GET /workspaces/{id}/invitations": the
// usable invitations, the forms to invite, and once a new link.
func (h *handlers) handleInvitationsPage(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	p, ok := h.invitationsPage(w, r, c, id)
	if !ok {
		return
	}
	if invID, link := h.takeShown(w, r, invitationsPath(id)); link != "" {
		d := p.Data.(*invitationsData)
		for _, inv := range d.Invitations {
			if inv.ID == invID && inv.Kind == workspace.InviteLink {
				d.NewLink, p.Script = link, copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "invitations", p)
}

func invitationsPath(orgID string) string { return "/workspaces/" + orgID + "/invitations" }

// handleInvite handles "POST /workspaces/{id}/invitations": addresses
// (separated by commas, spaces or lines) and a role, or kind=link.
func (h *handlers) handleInvite(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	in := workspace.InviteInput{Kind: r.PostFormValue("kind"), Role: r.PostFormValue("role")}
	if in.Kind != workspace.InviteLink {
		in.Emails = strings.FieldsFunc(r.PostFormValue("emails"), func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	}
	invs, invalid, err := h.ws.Invite(r.Context(), c.p, id, in)
	if err == nil && len(invalid) > 0 {
		// The valid ones were sent; the page keeps the refused ones to fix.
		p, ok := h.invitationsPage(w, r, c, id)
		if ok {
			p.Notice = ""
			p.Values = map[string]string{"emails": strings.Join(invalid, ", "), "role": in.Role}
			p.Fields = map[string]string{"emails": "Invitations went to the other addresses; these are not addresses: " + strings.Join(invalid, ", ") + "."}
			h.render(w, r, http.StatusBadRequest, "invitations", p)
		}
		return
	}
	if err != nil {
		if p, ok := h.invitationsPage(w, r, c, id); ok {
			p.Notice = ""
			h.refuse(w, r, "invitations", p, err, map[string]string{"emails": r.PostFormValue("emails"), "role": in.Role}, "emails", "role")
		}
		return
	}
	if in.Kind == workspace.InviteLink && len(invs) == 1 {
		h.showOnce(w, invitationsPath(id), invs[0].ID, invs[0].URL)
		http.Redirect(w, r, invitationsPath(id), http.StatusSeeOther)
		return
	}
	done(w, r, invitationsPath(id), "invited")
}

// handleRevokeInvitation handles "POST /workspaces/{id}/invitations/revoke".
func (h *handlers) handleRevokeInvitation(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	if err := h.ws.RevokeInvitation(r.Context(), c.p, id, r.PostFormValue("invitation_id")); err != nil {
		h.pageError(w, r, err)
		return
	}
	done(w, r, invitationsPath(id), "invitation-revoked")
}

// handleResendInvitation handles "POST /workspaces/{id}/invitations/resend":
// a new link mailed for a pending email invitation (the old one stops
// working), counted by the invitation mail limits.
func (h *handlers) handleResendInvitation(w http.ResponseWriter, r *http.Request) {
	c := h.caller(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("id")
	inv, err := h.ws.ResendInvitation(r.Context(), c.p, id, r.PostFormValue("invitation_id"))
	if err != nil {
		p, ok := h.invitationsPage(w, r, c, id)
		if !ok {
			return
		}
		p.Notice = ""
		h.refuse(w, r, "invitations", p, err, map[string]string{})
		return
	}
	h.doneNamed(w, r, invitationsPath(id), "invitation-resent", inv.Email)
}
