package sso

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// IDJAGPolicy is a workspace's policy for identity assertion grants
// (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant): which
// assertions Gatehouse accepts from the workspace's identity providers,
// and which it issues for the workspace's members. Everything is off
// until listed.
type IDJAGPolicy struct {
	Accept IDJAGAccept `json:"accept"`
	Issue  IDJAGIssue  `json:"issue"`
}

// IDJAGAccept is the accepting side: ID-JAGs of the listed OpenID
// Connect connections' identity providers, for the listed clients
// (registered here), resources (the MCP server, the tool APIs) and
// scopes.
type IDJAGAccept struct {
	Connections []string `json:"connections"`
	Clients     []string `json:"clients"`
	Resources   []string `json:"resources"`
	Scopes      []string `json:"scopes"`
}

// IDJAGIssue is the issuing side: ID-JAGs for the workspace's members,
// asked by the listed clients (registered here), for the listed
// audiences (other authorization servers' issuers), resources and scopes.
type IDJAGIssue struct {
	Clients   []string `json:"clients"`
	Audiences []string `json:"audiences"`
	Resources []string `json:"resources"`
	Scopes    []string `json:"scopes"`
}

// IDJAGStore keeps the workspaces' ID-JAG policies and finds the
// connections of an issuer (the accepting side's lookup).
type IDJAGStore interface {
	// IDJAGPolicy is org orgID's policy; ErrNotFound when it has none.
	IDJAGPolicy(ctx context.Context, orgID string) (*IDJAGPolicy, error)
	// SetIDJAGPolicy writes org orgID's policy.
	SetIDJAGPolicy(ctx context.Context, orgID string, p *IDJAGPolicy, by string, at time.Time) error
	// OIDCConnectionsByIssuer lists the OpenID Connect connections of
	// issuer, oldest first.
	OIDCConnectionsByIssuer(ctx context.Context, issuer string) ([]Connection, error)
}

// maxPolicyEntries bounds each list of a policy.
const maxPolicyEntries = 50

// policyOf is org orgID's policy, the empty one when it has none.
func policyOf(ctx context.Context, st Store, orgID string) (*IDJAGPolicy, error) {
	p, err := st.IDJAGPolicy(ctx, orgID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return &IDJAGPolicy{}, nil
	}
	if err != nil {
		return nil, gatehouse.Internal("read id-jag policy", err)
	}
	return p, nil
}

// IDJAGPolicyOf returns a team org's ID-JAG policy (owners and admins).
func (s *Service) IDJAGPolicyOf(ctx context.Context, p *gatehouse.Principal, orgID string) (*IDJAGPolicy, error) {
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	pol, err := policyOf(ctx, s.store, orgID)
	if err != nil {
		return nil, err
	}
	pol.normalize()
	return pol, nil
}

// SetIDJAGPolicy replaces a team org's ID-JAG policy (owners and admins,
// after a recent authentication: it lets clients act for members).
// Accepted connections must be the org's OpenID Connect ones.
func (s *Service) SetIDJAGPolicy(ctx context.Context, p *gatehouse.Principal, orgID string, pol IDJAGPolicy) (*IDJAGPolicy, error) {
	if err := s.id.RequireRecentAuth(ctx, p, "change the identity assertion policy"); err != nil {
		return nil, err
	}
	if err := pol.check(); err != nil {
		return nil, err
	}
	err := s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.ws.ManageSettings(ctx, tx, p, orgID); err != nil {
			return err
		}
		for _, id := range pol.Accept.Connections {
			c, err := connOf(ctx, tx, orgID, id)
			if err != nil {
				return gatehouse.InvalidField("accept.connections", "accept.connections must name the workspace's SSO connections")
			}
			if c.SAML != nil {
				return gatehouse.InvalidField("accept.connections", "only OpenID Connect connections can issue identity assertions")
			}
		}
		if err := tx.SetIDJAGPolicy(ctx, orgID, &pol, p.UserID, s.Now()); err != nil {
			return gatehouse.Internal("write id-jag policy", err)
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "sso.idjag_policy_updated", "org", orgID,
			map[string]any{"accept": pol.Accept, "issue": pol.Issue})
	})
	if err != nil {
		return nil, err
	}
	return &pol, nil
}

// normalize makes every list non-nil (the JSON answer has arrays).
func (p *IDJAGPolicy) normalize() {
	for _, l := range []*[]string{&p.Accept.Connections, &p.Accept.Clients, &p.Accept.Resources, &p.Accept.Scopes,
		&p.Issue.Clients, &p.Issue.Audiences, &p.Issue.Resources, &p.Issue.Scopes} {
		if *l == nil {
			*l = []string{}
		}
	}
}

// check validates and normalizes p: bounded lists of one-line entries,
// connections as ids, resources and audiences absolute URLs without a
// fragment (compared without a trailing slash), accepted scopes known
// ones.
func (p *IDJAGPolicy) check() error {
	p.normalize()
	lists := []struct {
		field string
		l     *[]string
		check func(string) bool
	}{
		{"accept.connections", &p.Accept.Connections, gatehouse.IsID},
		{"accept.clients", &p.Accept.Clients, oneLine},
		{"accept.resources", &p.Accept.Resources, absURL},
		{"accept.scopes", &p.Accept.Scopes, gatehouse.KnownScope},
		{"issue.clients", &p.Issue.Clients, oneLine},
		{"issue.audiences", &p.Issue.Audiences, absURL},
		{"issue.resources", &p.Issue.Resources, absURL},
		{"issue.scopes", &p.Issue.Scopes, scopeToken},
	}
	for _, x := range lists {
		if len(*x.l) > maxPolicyEntries {
			return gatehouse.InvalidField(x.field, "%s has more than %d entries", x.field, maxPolicyEntries)
		}
		out := make([]string, 0, len(*x.l))
		for _, v := range *x.l {
			v = strings.TrimSpace(v)
			if x.l == &p.Accept.Resources || x.l == &p.Issue.Audiences || x.l == &p.Issue.Resources {
				v = strings.TrimRight(v, "/")
			}
			if !x.check(v) {
				return gatehouse.InvalidField(x.field, "%s has an invalid entry", x.field)
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		*x.l = out
	}
	return nil
}

func oneLine(v string) bool {
	return v != "" && len(v) <= maxField && gatehouse.CheckOneLine("value", v) == nil
}

func absURL(v string) bool {
	u, err := url.Parse(v)
	return oneLine(v) && err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.Fragment == "" &&
		!strings.Contains(v, "#") && u.User == nil
}

func scopeToken(v string) bool {
	return v != "" && len(v) <= 100 && !strings.ContainsAny(v, " \t\r\n\"\\")
}

// sameURL compares resources and audiences as the policy stores them.
func sameURL(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }
