package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

type teamJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	MemberCount int     `json:"member_count"`
	MyRole      *string `json:"my_role"`
	CreatedAt   string  `json:"created_at"`
}

func toTeam(t *accounts.Team) teamJSON {
	var role *string
	if t.MyRole != "" {
		role = &t.MyRole
	}
	return teamJSON{ID: t.ID, Name: t.Name, Description: t.Description, MemberCount: t.MemberCount, MyRole: role, CreatedAt: stamp(t.CreatedAt)}
}

type personJSON struct {
	UserID    string `json:"user_id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	AvatarURL string `json:"avatar_url"`
	Role      string `json:"role"`
	JoinedAt  string `json:"joined_at"`
}

func toPeople(rows []accounts.PersonRow) []personJSON {
	out := make([]personJSON, len(rows))
	for i, p := range rows {
		out[i] = personJSON{UserID: p.UserID, Name: p.Name, Email: p.Email, AvatarURL: p.AvatarURL, Role: p.Role, JoinedAt: stamp(p.JoinedAt)}
	}
	return out
}

type teamInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// handleTeams handles "GET /v1/orgs/{id}/teams".
func (s *Server) handleTeams(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ts, err := s.svc.Teams(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]teamJSON, len(ts))
	for i := range ts {
		out[i] = toTeam(&ts[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"teams": out})
	return nil
}

// handleCreateTeam handles "POST /v1/orgs/{id}/teams".
func (s *Server) handleCreateTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in teamInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.svc.CreateTeam(r.Context(), p, r.PathValue("id"), accounts.TeamPatch{Name: in.Name, Description: in.Description})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"team": toTeam(t)})
	return nil
}

// handlePatchTeam handles "PATCH /v1/orgs/{id}/teams/{tid}".
func (s *Server) handlePatchTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in teamInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.svc.UpdateTeam(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), accounts.TeamPatch{Name: in.Name, Description: in.Description}); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"team updated"})
	return nil
}

// handleDeleteTeam handles "DELETE /v1/orgs/{id}/teams/{tid}".
func (s *Server) handleDeleteTeam(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.DeleteTeam(r.Context(), p, r.PathValue("id"), r.PathValue("tid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"team deleted"})
	return nil
}

// handleTeamMembers handles "GET /v1/orgs/{id}/teams/{tid}/members".
func (s *Server) handleTeamMembers(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	rows, err := s.svc.TeamMembers(r.Context(), p, r.PathValue("id"), r.PathValue("tid"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"members": toPeople(rows)})
	return nil
}

// handleSetTeamMember handles "POST /v1/orgs/{id}/teams/{tid}/members".
func (s *Server) handleSetTeamMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		UserID string `json:"user_id"`
		Role   string `json:"role"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.svc.SetTeamMember(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), in.UserID, in.Role); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"team member saved"})
	return nil
}

// handleRemoveTeamMember handles "DELETE /v1/orgs/{id}/teams/{tid}/members/{uid}".
func (s *Server) handleRemoveTeamMember(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RemoveTeamMember(r.Context(), p, r.PathValue("id"), r.PathValue("tid"), r.PathValue("uid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"team member removed"})
	return nil
}

type toolRowJSON struct {
	Tool    string `json:"tool"`
	Enabled bool   `json:"enabled"`
}

func writeTools(w http.ResponseWriter, rows []accounts.ToolRow) {
	out := make([]toolRowJSON, len(rows))
	for i, t := range rows {
		out[i] = toolRowJSON{t.Tool, t.Enabled}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"tools": out})
}

// handleTools handles "GET /v1/orgs/{id}/tools".
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	rows, err := s.svc.ToolMatrix(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeTools(w, rows)
	return nil
}

// handleSetTool handles "PUT /v1/orgs/{id}/tools": one tool, despite PUT.
func (s *Server) handleSetTool(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Tool    string `json:"tool"`
		Enabled *bool  `json:"enabled"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	rows, err := s.svc.SetTool(r.Context(), p, r.PathValue("id"), in.Tool, in.Enabled)
	if err != nil {
		return err
	}
	writeTools(w, rows)
	return nil
}

// handleOrgKeys handles "GET /v1/orgs/{id}/api-keys".
func (s *Server) handleOrgKeys(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ks, err := s.svc.OrgKeys(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeKeys(w, ks)
	return nil
}

// handleCreateOrgKey handles "POST /v1/orgs/{id}/api-keys".
func (s *Server) handleCreateOrgKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	return createKey(w, r, func(in accounts.KeyInput) (*accounts.NewKey, error) {
		return s.svc.CreateOrgKey(r.Context(), p, r.PathValue("id"), in)
	})
}

// handleDeleteOrgKey handles "DELETE /v1/orgs/{id}/api-keys/{kid}".
func (s *Server) handleDeleteOrgKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RevokeOrgKey(r.Context(), p, r.PathValue("id"), r.PathValue("kid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"api key revoked"})
	return nil
}

type auditJSON struct {
	ID         string `json:"id"`
	OrgID      string `json:"org_id"`
	Tool       string `json:"tool"`
	Action     string `json:"action"`
	ActorID    string `json:"actor_id"`
	TargetType string `json:"target_type"`
	TargetID   string `json:"target_id"`
	Meta       string `json:"meta"`
	At         string `json:"at"`
}

// handleAudit handles "GET /v1/orgs/{id}/audit".
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	q := r.URL.Query()
	if q.Has("limit") && q.Get("limit") == "" {
		return gatehouse.Invalid("limit must be an integer from 1 to %d", accounts.AuditMaxLimit)
	}
	entries, tools, err := s.svc.AuditLog(r.Context(), p, r.PathValue("id"), q.Get("tool"), q.Get("action"), q.Get("limit"))
	if err != nil {
		return err
	}
	out := make([]auditJSON, len(entries))
	for i, e := range entries {
		out[i] = auditJSON{ID: e.ID, OrgID: e.OrgID, Tool: e.Tool, Action: e.Action, ActorID: e.ActorID,
			TargetType: e.TargetType, TargetID: e.TargetID, Meta: e.Meta, At: e.At.UTC().Format("2006-01-02T15:04:05.000000Z07:00")}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"entries": out, "tools": tools})
	return nil
}

type dnsRecordJSON struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type domainJSON struct {
	ID         string         `json:"id"`
	Domain     string         `json:"domain"`
	Mode       string         `json:"mode"`
	Verified   bool           `json:"verified"`
	VerifiedAt *string        `json:"verified_at"`
	CreatedAt  string         `json:"created_at"`
	DNSRecord  *dnsRecordJSON `json:"dns_record"`
}

func toDomain(d *accounts.DomainClaim) domainJSON {
	out := domainJSON{ID: d.ID, Domain: d.Domain, Mode: d.Mode, Verified: d.VerifiedAt != nil, VerifiedAt: stampPtr(d.VerifiedAt), CreatedAt: stamp(d.CreatedAt)}
	if d.VerifiedAt == nil {
		out.DNSRecord = &dnsRecordJSON{Type: "TXT", Name: accounts.TXTName(d.Domain), Value: accounts.TXTPrefix + d.Token}
	}
	return out
}

// handleDomains handles "GET /v1/orgs/{id}/domains".
func (s *Server) handleDomains(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := s.svc.Domains(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]domainJSON, len(ds))
	for i := range ds {
		out[i] = toDomain(&ds[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domains": out})
	return nil
}

type domainInput struct {
	Domain string `json:"domain"`
	Mode   string `json:"mode"`
}

// handleClaimDomain handles "POST /v1/orgs/{id}/domains".
func (s *Server) handleClaimDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in domainInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.svc.ClaimDomain(r.Context(), p, r.PathValue("id"), in.Domain, in.Mode)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d)})
	return nil
}

// handlePatchDomain handles "PATCH /v1/orgs/{id}/domains/{did}".
func (s *Server) handlePatchDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in domainInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.svc.SetDomainMode(r.Context(), p, r.PathValue("id"), r.PathValue("did"), in.Mode)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d)})
	return nil
}

// handleDeleteDomain handles "DELETE /v1/orgs/{id}/domains/{did}".
func (s *Server) handleDeleteDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.DeleteDomain(r.Context(), p, r.PathValue("id"), r.PathValue("did")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"domain claim removed"})
	return nil
}

// handleVerifyDomain handles "POST /v1/orgs/{id}/domains/{did}/verify".
func (s *Server) handleVerifyDomain(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, msg, err := s.svc.VerifyDomain(r.Context(), p, r.PathValue("id"), r.PathValue("did"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"domain": toDomain(d), "message": msg})
	return nil
}

type orgSummaryJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	AvatarURL string `json:"avatar_url"`
}

// handleDiscoverable handles "GET /v1/me/discoverable".
func (s *Server) handleDiscoverable(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	off, err := s.svc.Discoverable(r.Context(), p)
	if err != nil {
		return err
	}
	if off == nil {
		httpjson.Write(w, http.StatusOK, map[string]any{"suggestion": nil})
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"suggestion": map[string]any{
		"org":    orgSummaryJSON{ID: off.Org.ID, Name: off.Org.Name, Slug: off.Org.Slug, AvatarURL: off.Org.AvatarURL},
		"domain": off.Domain,
	}})
	return nil
}

// handleJoinDiscoverable handles "POST /v1/me/discoverable/join".
func (s *Server) handleJoinDiscoverable(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	t, err := s.svc.JoinDiscoverable(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toOrgToken(t))
	return nil
}
