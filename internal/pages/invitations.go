package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "invited", Text: "Invitations sent."},
	{Key: "invitation-revoked", Text: "Invitation revoked."},
	{Key: "invitation-resent", Named: "A new invitation link went to %s; the earlier one no longer works."},
}.add()

// invitationsData is the invitations page's data.
type invitationsData struct {
	Org         workspace.OrgListing
	Invitations []*workspace.Invitation
	// NewLink is a link invitation's URL right after it was created (shown once).
	NewLink string
	Links   []orgLink
	Here    string
}

// invitationsPage builds the invitations page of workspace o; the
// workspace answers 403 to a role that may not manage members.
func (h *handlers) invitationsPage(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error) {
	invs, err := h.ws.Invitations(r.Context(), c.p, o.ID)
	if err != nil {
		return nil, err
	}
	p := c.page(r, tr(r, "%s: invitations", o.Name), "workspaces")
	p.Data = &invitationsData{Org: *o, Invitations: invs, Links: orgLinks(o), Here: "invitations"}
	p.Values = map[string]string{"role": workspace.RoleMember}
	return p, nil
}

// handleInvitationsPage handles "GET /workspaces/{id}/invitations": the
// usable invitations, the forms to invite, and once a new link.
func (h *handlers) handleInvitationsPage(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.invitationsPage(r, c, o)
	if err != nil {
		return err
	}
	if invID, link := h.takeShown(w, r, invitationsPath(o.ID)); link != "" {
		d := p.Data.(*invitationsData)
		for _, inv := range d.Invitations {
			if inv.ID == invID && inv.Kind == workspace.InviteLink {
				d.NewLink, p.Script = link, copyScriptPath
			}
		}
	}
	h.render(w, r, http.StatusOK, "invitations", p)
	return nil
}

func invitationsPath(orgID string) string { return "/workspaces/" + orgID + "/invitations" }

// handleInvite handles "POST /workspaces/{id}/invitations": addresses
// (separated by commas, spaces or lines) and a role, or kind=link.
func (h *handlers) handleInvite(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	in := workspace.InviteInput{Kind: r.PostFormValue("kind"), Role: r.PostFormValue("role")}
	if in.Kind != workspace.InviteLink {
		in.Emails = strings.FieldsFunc(r.PostFormValue("emails"), func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	}
	invs, invalid, err := h.ws.Invite(r.Context(), c.p, id, in)
	if err == nil && len(invalid) > 0 {
		// The valid ones were sent; the page keeps the refused ones to fix.
		p, err := h.pageIn(r, c, h.invitationsPage)
		if err != nil {
			return err
		}
		p.Notice = ""
		p.Values = map[string]string{"emails": strings.Join(invalid, ", "), "role": in.Role}
		p.Fields = map[string]string{"emails": "Invitations went to the other addresses; these are not addresses: " + strings.Join(invalid, ", ") + "."}
		h.render(w, r, http.StatusBadRequest, "invitations", p)
		return nil
	}
	if err != nil {
		p, perr := h.pageIn(r, c, h.invitationsPage)
		if perr != nil {
			return perr
		}
		p.Notice = ""
		return refused("invitations", p, err, map[string]string{"emails": r.PostFormValue("emails"), "role": in.Role}, "emails", "role")
	}
	if in.Kind == workspace.InviteLink && len(invs) == 1 {
		h.showOnce(w, invitationsPath(id), invs[0].ID, invs[0].URL)
		http.Redirect(w, r, invitationsPath(id), http.StatusSeeOther)
		return nil
	}
	done(w, r, invitationsPath(id), "invited")
	return nil
}

// handleRevokeInvitation handles "POST /workspaces/{id}/invitations/revoke".
func (h *handlers) handleRevokeInvitation(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	if err := h.ws.RevokeInvitation(r.Context(), c.p, id, r.PostFormValue("invitation_id")); err != nil {
		return err
	}
	done(w, r, invitationsPath(id), "invitation-revoked")
	return nil
}

// handleResendInvitation handles "POST /workspaces/{id}/invitations/resend":
// a new link mailed for a pending email invitation (the old one stops
// working), counted by the invitation mail limits.
func (h *handlers) handleResendInvitation(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	inv, err := h.ws.ResendInvitation(r.Context(), c.p, id, r.PostFormValue("invitation_id"))
	if err != nil {
		p, perr := h.pageIn(r, c, h.invitationsPage)
		if perr != nil {
			return perr
		}
		p.Notice = ""
		return refused("invitations", p, err, map[string]string{})
	}
	h.doneNamed(w, r, invitationsPath(id), "invitation-resent", inv.Email)
	return nil
}
