package workspace

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// the wrappers that authenticate the caller and write a returned error in
// the API's shape. FullIn names the path parameter that holds the
// workspace, so another workspace's key or OAuth token gets 404.
type Kernel interface {
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	Authed(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Full(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	FullIn(param string, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
}

// Mount serves /v1/orgs, /v1/invitations and domain discovery
// (/v1/me/discoverable) on m.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	h := &handlers{svc: svc}
	m.Handle("POST /v1/orgs", k.Authed(h.handleCreateOrg))
	m.Handle("GET /v1/orgs/{id}", k.Authed(h.handleOrg))
	m.Handle("PATCH /v1/orgs/{id}", k.Authed(h.handleUpdateOrg))
	m.Handle("DELETE /v1/orgs/{id}", k.FullIn("id", h.handleDeleteOrg))
	m.Handle("GET /v1/orgs/{id}/members", k.Authed(h.handleOrgMembers))
	m.Handle("PATCH /v1/orgs/{id}/members/{uid}", k.Authed(h.handleSetMemberRole))
	m.Handle("DELETE /v1/orgs/{id}/members/{uid}", k.Authed(h.handleRemoveMember))
	m.Handle("GET /v1/orgs/{id}/invitations", k.FullIn("id", h.handleInvitations))
	m.Handle("POST /v1/orgs/{id}/invitations", k.FullIn("id", h.handleInvite))
	m.Handle("DELETE /v1/orgs/{id}/invitations/{iid}", k.FullIn("id", h.handleRevokeInvitation))
	m.Handle("POST /v1/orgs/{id}/invitations/{iid}/resend", k.FullIn("id", h.handleResendInvitation))
	m.Handle("GET /v1/invitations/{token}", k.Public(h.handlePreviewInvitation))
	m.Handle("POST /v1/invitations/{token}/accept", k.Full(h.handleAcceptInvitation))

	m.Handle("GET /v1/orgs/{id}/teams", k.Authed(h.handleTeams))
	m.Handle("POST /v1/orgs/{id}/teams", k.Authed(h.handleCreateTeam))
	m.Handle("PATCH /v1/orgs/{id}/teams/{tid}", k.Authed(h.handlePatchTeam))
	m.Handle("DELETE /v1/orgs/{id}/teams/{tid}", k.Authed(h.handleDeleteTeam))
	m.Handle("GET /v1/orgs/{id}/teams/{tid}/members", k.Authed(h.handleTeamMembers))
	m.Handle("POST /v1/orgs/{id}/teams/{tid}/members", k.Authed(h.handleSetTeamMember))
	m.Handle("DELETE /v1/orgs/{id}/teams/{tid}/members/{uid}", k.Authed(h.handleRemoveTeamMember))
	m.Handle("GET /v1/orgs/{id}/tools", k.Authed(h.handleTools))
	m.Handle("PUT /v1/orgs/{id}/tools", k.Authed(h.handleSetTool))
	m.Handle("GET /v1/orgs/{id}/api-keys", k.FullIn("id", h.handleOrgKeys))
	m.Handle("POST /v1/orgs/{id}/api-keys", k.FullIn("id", h.handleCreateOrgKey))
	m.Handle("DELETE /v1/orgs/{id}/api-keys/{kid}", k.FullIn("id", h.handleDeleteOrgKey))
	m.Handle("GET /v1/orgs/{id}/audit", k.Authed(h.handleAudit))
	m.Handle("GET /v1/orgs/{id}/domains", k.Authed(h.handleDomains))
	m.Handle("POST /v1/orgs/{id}/domains", k.Authed(h.handleClaimDomain))
	m.Handle("PATCH /v1/orgs/{id}/domains/{did}", k.Authed(h.handlePatchDomain))
	m.Handle("DELETE /v1/orgs/{id}/domains/{did}", k.Authed(h.handleDeleteDomain))
	m.Handle("POST /v1/orgs/{id}/domains/{did}/verify", k.Authed(h.handleVerifyDomain))
	m.Handle("GET /v1/me/discoverable", k.Authed(h.handleDiscoverable))
	m.Handle("POST /v1/me/discoverable/join", k.Authed(h.handleJoinDiscoverable))
	mountApplications(m, k, h)
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
}

// handleCreateOrg handles "POST /v1/orgs": the new workspace and an access
// token that acts in it.
func (h *handlers) handleCreateOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	o, t, err := h.svc.CreateOrg(r.Context(), p, in.Name, true)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Org         orgJSON `json:"org"`
		AccessToken string  `json:"access_token"`
		TokenType   string  `json:"token_type"`
		ExpiresAt   string  `json:"expires_at"`
	}{toOrg(o), t.AccessToken, "Bearer", httpjson.Stamp(t.ExpiresAt)})
	return nil
}

// handleOrg handles "GET /v1/orgs/{id}".
func (h *handlers) handleOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	op, err := h.svc.OrgProfile(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeOrgProfile(w, op)
	return nil
}

// handleUpdateOrg handles "PATCH /v1/orgs/{id}".
func (h *handlers) handleUpdateOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name       *string `json:"name"`
		Slug       *string `json:"slug"`
		AvatarURL  *string `json:"avatar_url"`
		RequireMFA *bool   `json:"require_mfa"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	op, err := h.svc.UpdateOrg(r.Context(), p, r.PathValue("id"), OrgPatch{Name: in.Name, Slug: in.Slug, AvatarURL: in.AvatarURL, RequireMFA: in.RequireMFA})
	if err != nil {
		return err
	}
	writeOrgProfile(w, op)
	return nil
}

// handleDeleteOrg handles "DELETE /v1/orgs/{id}".
func (h *handlers) handleDeleteOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteOrg(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "organization deleted"})
	return nil
}

// handleOrgMembers handles "GET /v1/orgs/{id}/members".
func (h *handlers) handleOrgMembers(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ms, err := h.svc.OrgMembers(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string][]personJSON{"members": toPeople(ms)})
	return nil
}

// handleSetMemberRole handles "PATCH /v1/orgs/{id}/members/{uid}".
func (h *handlers) handleSetMemberRole(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Role string `json:"role"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.SetMemberRole(r.Context(), p, r.PathValue("id"), r.PathValue("uid"), in.Role); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "role changed"})
	return nil
}

// handleRemoveMember handles "DELETE /v1/orgs/{id}/members/{uid}".
func (h *handlers) handleRemoveMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RemoveMember(r.Context(), p, r.PathValue("id"), r.PathValue("uid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "member removed"})
	return nil
}

// handleInvitations handles "GET /v1/orgs/{id}/invitations": secrets are
// not kept, so a list never carries an invitation's URL.
func (h *handlers) handleInvitations(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	invs, err := h.svc.Invitations(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(invs))
	for i, inv := range invs {
		out[i] = toInvitation(inv)
		out[i].URL = ""
	}
	httpjson.Write(w, http.StatusOK, map[string][]invitationJSON{"invitations": out})
	return nil
}

// handleInvite handles "POST /v1/orgs/{id}/invitations": a link invitation
// alone, or the email invitations made and the addresses refused.
func (h *handlers) handleInvite(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Kind   string   `json:"kind"`
		Emails []string `json:"emails"`
		Role   string   `json:"role"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	invs, invalid, err := h.svc.Invite(r.Context(), p, r.PathValue("id"), InviteInput{Kind: in.Kind, Emails: in.Emails, Role: in.Role})
	if err != nil {
		return err
	}
	if len(invs) == 1 && invs[0].Kind == InviteLink {
		httpjson.Write(w, http.StatusOK, map[string]invitationJSON{"invitation": toInvitation(invs[0])})
		return nil
	}
	out := make([]invitationJSON, len(invs))
	for i, inv := range invs {
		out[i] = toInvitation(inv)
	}
	if invalid == nil {
		invalid = []string{}
	}
	httpjson.Write(w, http.StatusOK, struct {
		Invitations []invitationJSON `json:"invitations"`
		Invalid     []string         `json:"invalid"`
	}{out, invalid})
	return nil
}

// handleResendInvitation handles "POST /v1/orgs/{id}/invitations/{iid}/resend".
func (h *handlers) handleResendInvitation(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	inv, err := h.svc.ResendInvitation(r.Context(), p, r.PathValue("id"), r.PathValue("iid"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]invitationJSON{"invitation": toInvitation(inv)})
	return nil
}

// handleRevokeInvitation handles "DELETE /v1/orgs/{id}/invitations/{iid}".
func (h *handlers) handleRevokeInvitation(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RevokeInvitation(r.Context(), p, r.PathValue("id"), r.PathValue("iid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "invitation revoked"})
	return nil
}

// handlePreviewInvitation handles "GET /v1/invitations/{token}": what an
// invitation offers, shown before the invitee signs in.
func (h *handlers) handlePreviewInvitation(w http.ResponseWriter, r *http.Request) error {
	pv, err := h.svc.PreviewInvitation(r.Context(), r.PathValue("token"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toPreview(pv))
	return nil
}

// handleAcceptInvitation handles "POST /v1/invitations/{token}/accept": an
// access token that acts in the workspace joined.
func (h *handlers) handleAcceptInvitation(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	a, err := h.svc.AcceptInvitation(r.Context(), p, r.PathValue("token"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		OrgTokenJSON
		AlreadyMember bool `json:"already_member"`
		EmailVerified bool `json:"email_verified"`
	}{ToOrgToken(&a.OrgToken), a.AlreadyMember, a.EmailVerified})
	return nil
}

// handleDiscoverable handles "GET /v1/me/discoverable": the workspace the
// caller's verified email domain offers to join, or null.
func (h *handlers) handleDiscoverable(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	off, err := h.svc.Discoverable(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"suggestion": toSuggestion(off)})
	return nil
}

// handleJoinDiscoverable handles "POST /v1/me/discoverable/join".
func (h *handlers) handleJoinDiscoverable(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	t, err := h.svc.JoinDiscoverable(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ToOrgToken(t))
	return nil
}
