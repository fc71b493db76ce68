// Package workspace is the domain of organizations: orgs (team and
// personal), members and roles, invitations, teams, tool switches, org
// API keys, verified email domains and the audit log, with the rules over
// them and their HTTP handlers. SSO and SCIM will land here. It talks to
// the database only through Store; it knows nothing of identity, which
// builds on it.
package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/cache"
	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"
)

// AccessTTL is the life of an access token of a sign-in session or a
// workspace change (spec section 8).
const AccessTTL = time.Hour

// MaxName bounds names (of people, orgs, teams, keys), decided in
// docs/decisions.md.
const MaxName = 200

// Config wires a Service.
type Config struct {
	Store    Store
	Signer   keys.Signer // mints the tokens of a workspace change (token.Issue)
	Issuer   string      // their iss: the base URL
	Resolver TXTResolver // DNS for domain verification; nil: the system's
	Logger   *slog.Logger
	Now      func() time.Time // nil: time.Now
	WebURL   string           // base of links in emails
	// Brand names the product in the mail the service writes.
	Brand mail.Brand
	// NoMailLimits turns off the daily invitation mail limits; the zero
	// value keeps them on (GATEHOUSE_MAIL_LIMIT=off sets it).
	NoMailLimits bool
	// RecentAuth checks that the caller's sign-in is recent enough for a
	// sensitive change (identity's RequireRecentAuth); nil: no check.
	RecentAuth func(ctx context.Context, p *gatehouse.Principal, action string) error
	// PolicyRaised reports whether an org began requiring two-factor
	// lately (the revocation list's KindPolicy entries, which every
	// instance reads within its poll); nil: cached standings are trusted
	// for their cache.TTL.
	PolicyRaised func(orgID string) bool
	// SessionEnd is when a sign-in session opened at created ends however
	// it is refreshed (identity's AbsoluteEnd): a workspace change's token
	// expires by then. nil: tokens live AccessTTL.
	SessionEnd func(created time.Time) time.Time
}

// Service carries out every workspace operation.
type Service struct {
	store    Store
	signer   keys.Signer
	issuer   string
	resolver TXTResolver
	log      *slog.Logger
	now      func() time.Time
	webURL   string
	brand    mail.Brand
	// members holds a tool-API token's live standing in its org for
	// cache.TTL, keyed by subject and org.
	members      cache.Short[memberKey, standing]
	noMailLimits bool
	recentAuth   func(ctx context.Context, p *gatehouse.Principal, action string) error
	policyRaised func(orgID string) bool
	sessionEnd   func(created time.Time) time.Time
}

// New returns a Service.
func New(c Config) *Service {
	s := &Service{store: c.Store, signer: c.Signer, issuer: c.Issuer, resolver: c.Resolver, log: c.Logger, now: c.Now,
		webURL: strings.TrimRight(c.WebURL, "/"), noMailLimits: c.NoMailLimits, recentAuth: c.RecentAuth, brand: c.Brand,
		policyRaised: c.PolicyRaised, sessionEnd: c.SessionEnd}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.resolver == nil {
		s.resolver = dns.New("", 0)
	}
	return s
}

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now().UTC() }

// Audit writes one audit entry of the identity tool through st: every
// change to people and workspaces is logged in the workspace it touched.
func (s *Service) Audit(ctx context.Context, st Tables, orgID, actorID, action, targetType, targetID string, meta map[string]any) error {
	m := "{}"
	if len(meta) > 0 {
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		m = string(b)
	}
	return st.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: orgID, Tool: "identity", Action: "identity." + action,
		ActorID: actorID, TargetType: targetType, TargetID: targetID, Meta: m, At: s.Now()})
}

// EnabledTools lists the tools enabled in org o, in canonical order.
func (s *Service) EnabledTools(ctx context.Context, st Tables, o *Org) ([]string, error) {
	states := o.ToolStates
	if states == nil {
		var err error
		if states, err = st.ToolStates(ctx, o.ID); err != nil {
			return nil, err
		}
	}
	tools := make([]string, 0, len(Tools))
	for _, t := range Tools {
		if toolOn(states, t) {
			tools = append(tools, t)
		}
	}
	return tools, nil
}

// toolOn applies gatehouse.ToolOn to tool, given an org's switches set
// explicitly (ToolStates).
func toolOn(states map[string]bool, tool string) bool {
	if on, set := states[tool]; set {
		return gatehouse.ToolOn(&on)
	}
	return gatehouse.ToolOn(nil)
}

// OrgContext is the scope of a token in org o for a caller of role: the
// org, the role and the tools enabled there.
func (s *Service) OrgContext(ctx context.Context, st Tables, o *Org, role string) (*OrgContext, error) {
	tools, err := s.EnabledTools(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return &OrgContext{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: role, Tools: tools, RequireMFA: o.RequireMFA}, nil
}

// Claims are the claims of an access token scoped to oc; resources
// (RFC 8707, OAuth grants) join "gatehouse" in its audience. Identity signs
// them for sign-ins, workspace for workspace changes (OrgToken).
//
// lvl is the caller's assurance (aal, amr, a second factor owed), filled
// in for via when blank.
func (oc *OrgContext) Claims(sessionID, via string, lvl gatehouse.Assurance, resources ...string) token.Claims {
	lvl = lvl.Level(via)
	c := token.Claims{SessionID: sessionID, Via: via, Org: token.OrgClaim{ID: oc.ID, Role: oc.Role, Tools: oc.Tools},
		AAL: lvl.AAL, AMR: lvl.AMR}
	if lvl.Pending {
		c.MFA = token.MFAPending
	}
	c.Audience = resources
	return c
}

// OrgToken mints an access token for userID scoped to org o with role,
// keeping the caller's session and via: the answer of a switch into a
// workspace (switch-org, create, accept, join). It expires AccessTTL from
// now or at the session's absolute end, whichever is sooner.
func (s *Service) OrgToken(ctx context.Context, st Tables, userID, sessionID, via string, lvl gatehouse.Assurance, o *Org, role string) (*OrgToken, error) {
	if err := o.Admits(lvl); err != nil {
		return nil, err // no token for a workspace below its policy
	}
	oc, err := s.OrgContext(ctx, st, o, role)
	if err != nil {
		return nil, gatehouse.Internal("org context", err)
	}
	now, ttl := s.Now(), AccessTTL
	if s.sessionEnd != nil && sessionID != "" {
		// Read in st, the caller's transaction: a read beside it could
		// wait for a connection that transactions like it all hold.
		created, err := st.SessionCreated(ctx, sessionID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, ErrUnauthorized
		}
		if err != nil {
			return nil, gatehouse.Internal("find session", err)
		}
		if left := s.sessionEnd(created).Sub(now); left < ttl {
			ttl = max(left, 0)
		}
	}
	access, exp, err := token.Issue(ctx, s.signer, s.issuer, oc.Claims(sessionID, via, lvl), userID, now, ttl)
	if err != nil {
		return nil, gatehouse.Internal("mint", err)
	}
	return &OrgToken{AccessToken: access, ExpiresAt: exp, Org: oc}, nil
}

var (
	// ErrUnauthorized answers a caller whose credentials no longer hold.
	ErrUnauthorized = gatehouse.Errorf(gatehouse.KindUnauthorized, "missing or invalid credentials")
	errNoAccount    = gatehouse.Errorf(gatehouse.KindUnauthorized, "this account no longer exists")
	errNoPerson     = gatehouse.Errorf(gatehouse.KindForbidden, "an org API key acts for its workspace, not for a person; this operation needs a user's token")
)

// Caller reads the user behind a token through st; a deleted account's
// token is no longer valid, and an org key's (whose subject is the key) is
// refused: there is no person behind it.
func Caller(ctx context.Context, st Tables, userID string) (*gatehouse.User, error) {
	u, err := st.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		if k, kerr := st.APIKeyByID(ctx, userID); kerr == nil && k.Kind == KeyOrg {
			return nil, errNoPerson
		}
		return nil, errNoAccount
	}
	if err != nil {
		return nil, gatehouse.Internal("find user", err)
	}
	return u, nil
}
