package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// orgJSON is the Org shape of CONTRACT §3.
type orgJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	AvatarURL string `json:"avatar_url"`
	Kind      string `json:"kind"`
	CreatedAt string `json:"created_at"`
}

func toOrg(o *accounts.Org) orgJSON {
	return orgJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL, Kind: o.Kind, CreatedAt: stamp(o.CreatedAt)}
}

// orgProfileJSON is the org profile: the Org with its counts, no tools.
type orgProfileJSON struct {
	orgJSON
	MemberCount int `json:"member_count"`
	TeamCount   int `json:"team_count"`
}

func writeOrgProfile(w http.ResponseWriter, op *accounts.OrgProfile) {
	httpjson.Write(w, http.StatusOK, map[string]orgProfileJSON{"org": {toOrg(op.Org), op.MemberCount, op.TeamCount}})
}

// handleCreateOrg handles "POST /v1/orgs".
func (s *Server) handleCreateOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	o, t, err := s.svc.CreateOrg(r.Context(), p, in.Name)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Org         orgJSON `json:"org"`
		AccessToken string  `json:"access_token"`
		TokenType   string  `json:"token_type"`
		ExpiresAt   string  `json:"expires_at"`
	}{toOrg(o), t.AccessToken, "Bearer", stamp(t.ExpiresAt)})
	return nil
}

// handleOrg handles "GET /v1/orgs/{id}".
func (s *Server) handleOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	op, err := s.svc.OrgProfile(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeOrgProfile(w, op)
	return nil
}

// handleUpdateOrg handles "PATCH /v1/orgs/{id}".
func (s *Server) handleUpdateOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name      *string `json:"name"`
		Slug      *string `json:"slug"`
		AvatarURL *string `json:"avatar_url"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	op, err := s.svc.UpdateOrg(r.Context(), p, r.PathValue("id"), accounts.OrgPatch{Name: in.Name, Slug: in.Slug, AvatarURL: in.AvatarURL})
	if err != nil {
		return err
	}
	writeOrgProfile(w, op)
	return nil
}

// handleDeleteOrg handles "DELETE /v1/orgs/{id}".
func (s *Server) handleDeleteOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.DeleteOrg(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"organization deleted"})
	return nil
}
