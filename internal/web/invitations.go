package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// invitationJSON is the Invitation shape of CONTRACT §3: email only on the
// email kind, url only right after creation, expires_at null on link
// invitations (they do not expire).
type invitationJSON struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Role      string  `json:"role"`
	Email     string  `json:"email,omitempty"`
	URL       string  `json:"url,omitempty"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
	Inviter   string  `json:"inviter"`
}

func toInvitation(inv *accounts.Invitation) invitationJSON {
	return invitationJSON{ID: inv.ID, Kind: inv.Kind, Role: inv.Role, Email: inv.Email, URL: inv.URL,
		ExpiresAt: stampPtr(inv.ExpiresAt), CreatedAt: stamp(inv.CreatedAt), Inviter: inv.Inviter}
}

// handleInvitations handles "GET /v1/orgs/{id}/invitations".
func (s *Server) handleInvitations(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	invs, err := s.svc.Invitations(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(invs))
	for i, inv := range invs {
		out[i] = toInvitation(inv)
		out[i].URL = "" // secrets are not kept; lists never carry them
	}
	httpjson.Write(w, http.StatusOK, map[string][]invitationJSON{"invitations": out})
	return nil
}

// handleInvite handles "POST /v1/orgs/{id}/invitations".
func (s *Server) handleInvite(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Kind   string   `json:"kind"`
		Emails []string `json:"emails"`
		Role   string   `json:"role"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	invs, invalid, err := s.svc.Invite(r.Context(), p, r.PathValue("id"), accounts.InviteInput{Kind: in.Kind, Emails: in.Emails, Role: in.Role})
	if err != nil {
		return err
	}
	if len(invs) == 1 && invs[0].Kind == accounts.InviteLink {
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

// handleRevokeInvitation handles "DELETE /v1/orgs/{id}/invitations/{iid}".
func (s *Server) handleRevokeInvitation(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RevokeInvitation(r.Context(), p, r.PathValue("id"), r.PathValue("iid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"invitation revoked"})
	return nil
}

// handlePreviewInvitation handles "GET /v1/invitations/{token}".
func (s *Server) handlePreviewInvitation(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.svc.PreviewInvitation(r.Context(), r.PathValue("token"))
	if err != nil {
		return err
	}
	type orgBrief struct {
		Name      string `json:"name"`
		Slug      string `json:"slug"`
		AvatarURL string `json:"avatar_url"`
	}
	httpjson.Write(w, http.StatusOK, struct {
		Org     orgBrief `json:"org"`
		Role    string   `json:"role"`
		Kind    string   `json:"kind"`
		Inviter string   `json:"inviter"`
	}{orgBrief{pv.Org.Name, pv.Org.Slug, pv.Org.AvatarURL}, pv.Role, pv.Kind, pv.Inviter})
	return nil
}

// handleAcceptInvitation handles "POST /v1/invitations/{token}/accept".
func (s *Server) handleAcceptInvitation(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	a, err := s.svc.AcceptInvitation(r.Context(), p, r.PathValue("token"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		orgTokenJSON
		AlreadyMember bool `json:"already_member"`
	}{toOrgToken(&a.OrgToken), a.AlreadyMember})
	return nil
}
