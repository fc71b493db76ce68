package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// handlePatchMe handles "PATCH /v1/me".
func (s *Server) handlePatchMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name      *string `json:"name"`
		AvatarURL *string `json:"avatar_url"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := s.svc.UpdateProfile(r.Context(), p, accounts.ProfilePatch{Name: in.Name, AvatarURL: in.AvatarURL})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"user": toUser(u)})
	return nil
}

// handleDeleteMe handles "DELETE /v1/me".
func (s *Server) handleDeleteMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.DeleteAccount(r.Context(), p); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"account deleted"})
	return nil
}

// handlePassword handles "POST /v1/me/password".
func (s *Server) handlePassword(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.svc.ChangePassword(r.Context(), p, in.CurrentPassword, in.NewPassword, sessionMeta(r)); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"password changed; other sessions were signed out"})
	return nil
}

// handleResend handles "POST /v1/me/verify-email/resend".
func (s *Server) handleResend(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	outcome, err := s.svc.ResendVerification(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{outcome})
	return nil
}

type orgListingJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	AvatarURL   string `json:"avatar_url"`
	Kind        string `json:"kind"`
	CreatedAt   string `json:"created_at"`
	Role        string `json:"role"`
	MemberCount int    `json:"member_count"`
	IsDefault   bool   `json:"is_default"`
}

// handleMyOrgs handles "GET /v1/me/orgs".
func (s *Server) handleMyOrgs(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	orgs, def, err := s.svc.MyOrgs(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]orgListingJSON, len(orgs))
	for i, o := range orgs {
		out[i] = orgListingJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL, Kind: o.Kind,
			CreatedAt: stamp(o.CreatedAt), Role: o.Role, MemberCount: o.MemberCount, IsDefault: o.ID == def}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"orgs": out})
	return nil
}

type sessionRowJSON struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"created_at"`
	ExpiresAt  string `json:"expires_at"`
	LastUsedAt string `json:"last_used_at"`
	UserAgent  string `json:"user_agent"`
	IP         string `json:"ip"`
	Current    bool   `json:"current"`
}

// handleSessions handles "GET /v1/me/sessions".
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ss, err := s.svc.Sessions(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]sessionRowJSON, len(ss))
	for i, x := range ss {
		out[i] = sessionRowJSON{ID: x.ID, CreatedAt: stamp(x.CreatedAt), ExpiresAt: stamp(x.ExpiresAt), LastUsedAt: stamp(x.LastUsedAt),
			UserAgent: x.UserAgent, IP: x.IP, Current: x.ID == p.SessionID}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"sessions": out})
	return nil
}

// handleDeleteSession handles "DELETE /v1/me/sessions/{sid}".
func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RevokeSession(r.Context(), p, r.PathValue("sid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"session revoked"})
	return nil
}

type grantJSON struct {
	ID         string `json:"id"`
	ClientID   string `json:"client_id"`
	ClientName string `json:"client_name"`
	OrgID      string `json:"org_id"`
	Scope      string `json:"scope"`
	CreatedAt  string `json:"created_at"`
}

// handleGrants handles "GET /v1/me/grants".
func (s *Server) handleGrants(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	gs, err := s.svc.Grants(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]grantJSON, len(gs))
	for i, g := range gs {
		out[i] = grantJSON{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, OrgID: g.OrgID, Scope: g.Scope, CreatedAt: stamp(g.CreatedAt)}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"grants": out})
	return nil
}

// handleDeleteGrant handles "DELETE /v1/me/grants/{gid}".
func (s *Server) handleDeleteGrant(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RevokeGrant(r.Context(), p, r.PathValue("gid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"grant revoked"})
	return nil
}
