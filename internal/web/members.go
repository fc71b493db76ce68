package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// memberJSON is the Member row of CONTRACT §3.
type memberJSON struct {
	UserID    string `json:"user_id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	AvatarURL string `json:"avatar_url"`
	Role      string `json:"role"`
	JoinedAt  string `json:"joined_at"`
}

// handleOrgMembers handles "GET /v1/orgs/{id}/members".
func (s *Server) handleOrgMembers(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ms, err := s.svc.OrgMembers(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]memberJSON, len(ms))
	for i, m := range ms {
		out[i] = memberJSON{UserID: m.UserID, Name: m.Name, Email: m.Email, AvatarURL: m.AvatarURL, Role: m.Role, JoinedAt: stamp(m.JoinedAt)}
	}
	httpjson.Write(w, http.StatusOK, map[string][]memberJSON{"members": out})
	return nil
}

// handleSetMemberRole handles "PATCH /v1/orgs/{id}/members/{uid}".
func (s *Server) handleSetMemberRole(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Role string `json:"role"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.svc.SetMemberRole(r.Context(), p, r.PathValue("id"), r.PathValue("uid"), in.Role); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"role changed"})
	return nil
}

// handleRemoveMember handles "DELETE /v1/orgs/{id}/members/{uid}".
func (s *Server) handleRemoveMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RemoveMember(r.Context(), p, r.PathValue("id"), r.PathValue("uid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"member removed"})
	return nil
}
