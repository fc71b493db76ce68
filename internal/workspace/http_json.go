package workspace

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
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

func toOrg(o *Org) orgJSON {
	return orgJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, AvatarURL: o.AvatarURL, Kind: o.Kind, CreatedAt: httpjson.Stamp(o.CreatedAt)}
}

// orgProfileJSON is the org profile: the Org with its counts, no tools.
type orgProfileJSON struct {
	orgJSON
	MemberCount int  `json:"member_count"`
	TeamCount   int  `json:"team_count"`
	RequireMFA  bool `json:"require_mfa"`
}

func writeOrgProfile(w http.ResponseWriter, op *OrgProfile) {
	httpjson.Write(w, http.StatusOK, map[string]orgProfileJSON{"org": {toOrg(op.Org), op.MemberCount, op.TeamCount, op.Org.RequireMFA}})
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

func toPeople(rows []PersonRow) []personJSON {
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

func toInvitation(inv *Invitation) invitationJSON {
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

func toPreview(pv *InvitationPreview) previewJSON {
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
func toSuggestion(off *DomainOffer) *suggestionJSON {
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

func toTeam(t *Team) teamJSON {
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
func writeTools(w http.ResponseWriter, rows []ToolRow) {
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

func toDomain(d *DomainClaim) domainJSON {
	out := domainJSON{ID: d.ID, Domain: d.Domain, Mode: d.Mode, Verified: d.VerifiedAt != nil, VerifiedAt: httpjson.StampPtr(d.VerifiedAt), CreatedAt: httpjson.Stamp(d.CreatedAt)}
	if d.VerifiedAt == nil {
		out.DNSRecord = &dnsRecordJSON{Type: "TXT", Name: TXTName(d.Domain), Value: TXTPrefix + d.Token}
	}
	return out
}

// OrgContextJSON is the workspace an access token acts in, with the
// caller's role and the tools it may use there.
type OrgContextJSON struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Slug  string   `json:"slug"`
	Kind  string   `json:"kind"`
	Role  string   `json:"role"`
	Tools []string `json:"tools"`
}

// ToOrgContext is the JSON shape of o.
func ToOrgContext(o *OrgContext) OrgContextJSON {
	tools := o.Tools
	if tools == nil {
		tools = []string{}
	}
	return OrgContextJSON{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: o.Role, Tools: tools}
}

// OrgTokenJSON is an access token for one workspace without a refresh
// token (switch-org, key exchange, invitation accept, discovery join).
type OrgTokenJSON struct {
	AccessToken string         `json:"access_token"`
	TokenType   string         `json:"token_type"`
	ExpiresAt   string         `json:"expires_at"`
	Org         OrgContextJSON `json:"org"`
}

// ToOrgToken is the JSON shape of t.
func ToOrgToken(t *OrgToken) OrgTokenJSON {
	return OrgTokenJSON{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresAt: httpjson.Stamp(t.ExpiresAt), Org: ToOrgContext(t.Org)}
}

// apiKeyJSON is an API key, personal or a workspace's; the secret only
// right after creation.
type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	OrgID      string   `json:"org_id"`
	Role       string   `json:"role,omitempty"`
	Tools      []string `json:"tools"`
	Prefix     string   `json:"prefix"`
	ExpiresAt  *string  `json:"expires_at"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	Secret     string   `json:"secret,omitempty"`
}

func toAPIKey(k *APIKey) apiKeyJSON {
	tools := k.Tools
	if tools == nil {
		tools = []string{}
	}
	role := k.Role
	if k.Kind == KeyUser {
		role = ""
	}
	return apiKeyJSON{ID: k.ID, Name: k.Name, Kind: k.Kind, OrgID: k.OrgID, Role: role, Tools: tools, Prefix: k.Prefix,
		ExpiresAt: httpjson.StampPtr(k.ExpiresAt), CreatedAt: httpjson.Stamp(k.CreatedAt), LastUsedAt: httpjson.StampPtr(k.LastUsedAt)}
}

// WriteKeys answers a list of API keys (no secrets): a workspace's keys
// here, the personal keys in identity.
func WriteKeys(w http.ResponseWriter, ks []APIKey) {
	out := make([]apiKeyJSON, len(ks))
	for i := range ks {
		out[i] = toAPIKey(&ks[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"api_keys": out})
}
