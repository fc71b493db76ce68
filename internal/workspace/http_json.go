package workspace

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// The JSON shapes of CONTRACT §3 that workspace answers with. Timestamps
// are RFC 3339 in UTC; the audit log's have microseconds.

// orgJSON is the Org shape.
type orgJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	AvatarURL string `json:"avatar_url"`
	Kind      string `json:"kind"`
	CreatedAt string `json:"created_at"`
}

func toOrg(o *accounts.Org) orgJSON {
	return orgJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL, Kind: o.Kind, CreatedAt: httpjson.Stamp(o.CreatedAt)}
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

// personJSON is a member of a workspace or of a team.
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
		out[i] = personJSON{UserID: p.UserID, Name: p.Name, Email: p.Email, AvatarURL: p.AvatarURL, Role: p.Role, JoinedAt: httpjson.Stamp(p.JoinedAt)}
	}
	return out
}

// invitationJSON is the Invitation shape: email only on the email kind,
// url only right after creation, expires_at null on link invitations
// (they do not expire).
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
		ExpiresAt: httpjson.StampPtr(inv.ExpiresAt), CreatedAt: httpjson.Stamp(inv.CreatedAt), Inviter: inv.Inviter}
}

// previewJSON is what an invitation shows before it is accepted.
type previewJSON struct {
	Org struct {
		Name      string `json:"name"`
		Slug      string `json:"slug"`
		AvatarURL string `json:"avatar_url"`
	} `json:"org"`
	Role    string `json:"role"`
	Kind    string `json:"kind"`
	Inviter string `json:"inviter"`
}

func toPreview(pv *accounts.InvitationPreview) previewJSON {
	out := previewJSON{Role: pv.Role, Kind: pv.Kind, Inviter: pv.Inviter}
	out.Org.Name, out.Org.Slug, out.Org.AvatarURL = pv.Org.Name, pv.Org.Slug, pv.Org.AvatarURL
	return out
}

// suggestionJSON is a workspace offered by the caller's email domain.
type suggestionJSON struct {
	Domain string         `json:"domain"`
	Org    orgSummaryJSON `json:"org"`
}

type orgSummaryJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	AvatarURL string `json:"avatar_url"`
}

// toSuggestion is the offer off, nil (JSON null) when there is none.
func toSuggestion(off *accounts.DomainOffer) *suggestionJSON {
	if off == nil {
		return nil
	}
	return &suggestionJSON{Domain: off.Domain, Org: orgSummaryJSON{ID: off.Org.ID, Name: off.Org.Name, Slug: off.Org.Slug, AvatarURL: off.Org.AvatarURL}}
}

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
	return teamJSON{ID: t.ID, Name: t.Name, Description: t.Description, MemberCount: t.MemberCount, MyRole: role, CreatedAt: httpjson.Stamp(t.CreatedAt)}
}

type toolRowJSON struct {
	Tool    string `json:"tool"`
	Enabled bool   `json:"enabled"`
}

// writeTools answers a workspace's tool switches.
func writeTools(w http.ResponseWriter, rows []accounts.ToolRow) {
	out := make([]toolRowJSON, len(rows))
	for i, t := range rows {
		out[i] = toolRowJSON{t.Tool, t.Enabled}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"tools": out})
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

func toAudit(e *gatehouse.AuditEntry) auditJSON {
	return auditJSON{ID: e.ID, OrgID: e.OrgID, Tool: e.Tool, Action: e.Action, ActorID: e.ActorID,
		TargetType: e.TargetType, TargetID: e.TargetID, Meta: e.Meta, At: e.At.UTC().Format("2006-01-02T15:04:05.000000Z07:00")}
}

type dnsRecordJSON struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// domainJSON is a domain claim; dns_record, the TXT record to publish,
// only while it is not verified.
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
	out := domainJSON{ID: d.ID, Domain: d.Domain, Mode: d.Mode, Verified: d.VerifiedAt != nil, VerifiedAt: httpjson.StampPtr(d.VerifiedAt), CreatedAt: httpjson.Stamp(d.CreatedAt)}
	if d.VerifiedAt == nil {
		out.DNSRecord = &dnsRecordJSON{Type: "TXT", Name: accounts.TXTName(d.Domain), Value: accounts.TXTPrefix + d.Token}
	}
	return out
}
