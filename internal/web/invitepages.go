package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
)

// Invitations is what the invitation landing page needs from the domain:
// the preview and the acceptance of GET /v1/invitations/{token} and POST
// /v1/invitations/{token}/accept.
//
// Invitations is what the invitation landing page needs of the domain:
// accounts.Service through serviceInvitations, or a fake in page tests.
type Invitations interface {
	// PreviewInvitation errors with KindNotFound for an unknown token and
	// KindGone for a used-up, revoked or deleted-org invitation.
	PreviewInvitation(ctx context.Context, token string) (*InvitationPreview, error)
	// AcceptInvitation accepts as p, a full session of the signed-in user.
	AcceptInvitation(ctx context.Context, p *gatehouse.Principal, token string) (*InvitationAccepted, error)
}

// InvitationPreview is what the page shows before accepting.
type InvitationPreview struct {
	OrgName, OrgSlug, OrgAvatarURL string
	Role, Kind, InviterName        string
}

// InvitationAccepted is the outcome of accepting.
type InvitationAccepted struct {
	OrgName       string
	AlreadyMember bool
}

func (s *Server) invitationsMissing(w http.ResponseWriter) bool {
	if s.invitations != nil {
		return false
	}
	s.render(w, http.StatusNotFound, "error", &page{Title: "Invitation", Message: "Invitations are not available on this server yet."})
	return true
}

// handleInvitePage handles "GET /invite?token=…": a preview, and an accept
// button for a signed-in user (a sign-in link otherwise).
func (s *Server) handleInvitePage(w http.ResponseWriter, r *http.Request) {
	if s.invitationsMissing(w) {
		return
	}
	tok := r.URL.Query().Get("token")
	inv, err := s.invitations.PreviewInvitation(r.Context(), tok)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := &page{Title: "Join " + inv.OrgName, Invite: inv, Token: tok,
		SignIn: "/signin?" + url.Values{"next": {r.URL.RequestURI()}, "intro": {"invite"}}.Encode()}
	if b != nil {
		p.User = b.User
	}
	s.render(w, http.StatusOK, "invite", p)
}

// handleInviteAccept handles "POST /invite".
func (s *Server) handleInviteAccept(w http.ResponseWriter, r *http.Request) {
	if s.invitationsMissing(w) {
		return
	}
	tok := r.PostFormValue("token")
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if b == nil {
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/invite?token=" + url.QueryEscape(tok)}, "intro": {"invite"}}.Encode(), http.StatusSeeOther)
		return
	}
	p, err := s.svc.BrowserPrincipal(r.Context(), b)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	out, err := s.invitations.AcceptInvitation(r.Context(), p, tok)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	msg := "You joined " + out.OrgName + "."
	if out.AlreadyMember {
		msg = "You are already a member of " + out.OrgName + "."
	}
	s.render(w, http.StatusOK, "message", &page{Title: "Invitation accepted", Message: msg})
}

// serviceInvitations serves the invitation page from the accounts service.
type serviceInvitations struct{ svc *accounts.Service }

func (a serviceInvitations) PreviewInvitation(ctx context.Context, token string) (*InvitationPreview, error) {
	p, err := a.svc.PreviewInvitation(ctx, token)
	if err != nil {
		return nil, err
	}
	return &InvitationPreview{OrgName: p.Org.Name, OrgSlug: p.Org.Slug, OrgAvatarURL: p.Org.AvatarURL,
		Role: p.Role, Kind: p.Kind, InviterName: p.Inviter}, nil
}

func (a serviceInvitations) AcceptInvitation(ctx context.Context, p *gatehouse.Principal, token string) (*InvitationAccepted, error) {
	acc, err := a.svc.AcceptInvitation(ctx, p, token)
	if err != nil {
		return nil, err
	}
	return &InvitationAccepted{OrgName: acc.Org.Name, AlreadyMember: acc.AlreadyMember}, nil
}
