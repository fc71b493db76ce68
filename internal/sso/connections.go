package sso

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Bounds of a connection's fields.
const (
	MaxConnections = 10
	MaxDomains     = 20
	maxName        = 100
	maxField       = 2048
)

// DefaultScopes are a connection's scopes unless it names others.
var DefaultScopes = []string{oidc.ScopeOpenID, "email", "profile"}

var errConnNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "SSO connection not found")

// Input is the body of POST and PATCH /v1/orgs/{id}/sso; nil fields are
// left as they are (POST requires issuer, client_id, client_secret and
// domains).
type Input struct {
	Name         *string
	Issuer       *string
	ClientID     *string
	ClientSecret *string
	Scopes       *[]string
	DefaultRole  *string
	Enforce      *bool
	Domains      *[]string
	// SAML makes (or changes) a SAML connection.
	SAML *SAMLInput
	// Mapping replaces the attribute mapping.
	Mapping *AttributeMapping
}

// fields names the fields in sets, for the audit log (never a value of
// the secret).
func (in *Input) fields() []string {
	out := []string{}
	for name, set := range map[string]bool{"name": in.Name != nil, "issuer": in.Issuer != nil, "client_id": in.ClientID != nil,
		"client_secret": in.ClientSecret != nil, "scopes": in.Scopes != nil, "default_role": in.DefaultRole != nil,
		"enforce": in.Enforce != nil, "domains": in.Domains != nil, "saml": in.SAML != nil, "attribute_mapping": in.Mapping != nil} {
		if set {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// apply checks in and writes it to c; the secret is sealed to c.ID.
func (s *Service) apply(in *Input, c *Connection, create bool) error {
	if create {
		for field, v := range map[string]*string{"issuer": in.Issuer, "client_id": in.ClientID, "client_secret": in.ClientSecret} {
			if v == nil || strings.TrimSpace(*v) == "" {
				return gatehouse.InvalidField(field, "%s is required", field)
			}
		}
		if in.Domains == nil || len(*in.Domains) == 0 {
			return gatehouse.InvalidField("domains", "domains is required: one or more of the workspace's verified domains")
		}
	}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if err := gatehouse.CheckOneLine("name", name); err != nil {
			return err
		}
		if utf8.RuneCountInString(name) > maxName {
			return gatehouse.InvalidField("name", "name must be at most %d characters", maxName)
		}
		c.Name = name
	}
	if in.Issuer != nil {
		iss, err := s.checkIssuer(*in.Issuer)
		if err != nil {
			return err
		}
		c.Issuer = iss
	}
	if in.ClientID != nil {
		id := strings.TrimSpace(*in.ClientID)
		if id == "" || len(id) > maxField || gatehouse.CheckOneLine("client_id", id) != nil {
			return gatehouse.InvalidField("client_id", "client_id must be one line of 1 to %d bytes", maxField)
		}
		c.ClientID = id
	}
	if in.ClientSecret != nil {
		secret := *in.ClientSecret
		if secret == "" || len(secret) > maxField {
			return gatehouse.InvalidField("client_secret", "client_secret must be 1 to %d bytes", maxField)
		}
		c.SealedSecret = s.secrets.Seal([]byte(secret), []byte(c.ID))
	}
	if in.Scopes != nil {
		scopes := []string{oidc.ScopeOpenID}
		for _, sc := range *in.Scopes {
			if sc == "" || len(sc) > 100 || strings.ContainsAny(sc, " \t\r\n\"\\") {
				return gatehouse.InvalidField("scopes", "scopes must be OAuth scope tokens")
			}
			if !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
		if !slices.Contains(scopes, "email") {
			scopes = append(scopes, "email")
		}
		c.Scopes = scopes
	}
	if in.DefaultRole != nil {
		switch *in.DefaultRole {
		case workspace.RoleMember, workspace.RoleAdmin, workspace.RoleBilling:
			c.DefaultRole = *in.DefaultRole
		default:
			return gatehouse.InvalidField("default_role", "default_role must be member, admin or billing (never owner)")
		}
	}
	if in.Enforce != nil {
		c.Enforce = *in.Enforce
	}
	return nil
}

// checkIssuer normalizes an issuer URL: https (http only where private
// addresses are allowed, development and tests), no query or fragment.
func (s *Service) checkIssuer(raw string) (string, error) {
	schemes := []string{"https"}
	if s.private {
		schemes = append(schemes, "http")
	}
	iss, ok := outbound.ParseURL(strings.TrimSpace(raw), maxField, schemes...)
	if !ok || strings.ContainsAny(iss, "?#") {
		return "", gatehouse.InvalidField("issuer", "issuer must be the identity provider's https issuer URL")
	}
	return iss, nil
}

// checkDomains is domains normalized, each verified by org orgID.
func checkDomains(ctx context.Context, st Store, orgID string, domains []string) ([]string, error) {
	if len(domains) == 0 || len(domains) > MaxDomains {
		return nil, gatehouse.InvalidField("domains", "domains must list 1 to %d of the workspace's verified domains", MaxDomains)
	}
	var out []string
	for _, raw := range domains {
		d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
		if slices.Contains(out, d) {
			continue
		}
		by, err := st.DomainVerifiedBy(ctx, d)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && by != orgID) {
			return nil, gatehouse.InvalidField("domains", "%s is not a verified domain of this workspace; verify it first (POST /v1/orgs/{id}/domains)", clip(d))
		}
		if err != nil {
			return nil, gatehouse.Internal("domain verified by", err)
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out, nil
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100]
	}
	return s
}

// discover fetches the issuer's discovery document: an issuer that does
// not answer as itself is refused (go-oidc checks the issuer it names).
func (s *Service) discover(ctx context.Context, issuer string) (*oidc.Provider, error) {
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, s.client), issuer)
	if err != nil {
		s.log.Info("sso issuer discovery failed", "issuer", issuer, "err", err)
		return nil, gatehouse.InvalidField("issuer", "the issuer's OpenID discovery document (/.well-known/openid-configuration) could not be read or names another issuer")
	}
	return p, nil
}

// Connections lists an org's connections, oldest first.
func (s *Service) Connections(ctx context.Context, p *gatehouse.Principal, orgID string) ([]Connection, error) {
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	cs, err := s.store.ListConnections(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("list sso connections", err)
	}
	return cs, nil
}

// Connection returns one of an org's connections.
func (s *Service) Connection(ctx context.Context, p *gatehouse.Principal, orgID, id string) (*Connection, error) {
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	return connOf(ctx, s.store, orgID, id)
}

// connOf is connection id of org orgID; 404 otherwise.
func connOf(ctx context.Context, st Store, orgID, id string) (*Connection, error) {
	if !gatehouse.IsID(id) {
		return nil, errConnNotFound
	}
	c, err := st.ConnectionByID(ctx, id)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && c.OrgID != orgID) {
		return nil, errConnNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find sso connection", err)
	}
	return c, nil
}

// errDomainTaken answers a domain another connection serves.
var errDomainTaken = gatehouse.Errorf(gatehouse.KindConflict, "one of the domains is served by another SSO connection; remove it there first")

// CreateConnection adds an OpenID Connect connection to a team org, after
// reading the issuer's discovery document, or a SAML one (in.SAML) after
// reading its identity provider's metadata.
func (s *Service) CreateConnection(ctx context.Context, p *gatehouse.Principal, orgID string, in Input) (*Connection, error) {
	if err := s.id.RequireRecentAuth(ctx, p, "add an SSO connection"); err != nil {
		return nil, err
	}
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	now := s.Now()
	c := &Connection{ID: gatehouse.NewID(), OrgID: orgID, Name: "Single sign-on", Scopes: DefaultScopes, DefaultRole: workspace.RoleMember,
		CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
	if in.SAML != nil {
		md, err := s.samlMetadata(ctx, in.SAML)
		if err != nil {
			return nil, err
		}
		if err := s.applySAML(&in, c, md, true); err != nil {
			return nil, err
		}
	} else if err := s.apply(&in, c, true); err != nil {
		return nil, err
	} else if _, err := s.discover(ctx, c.Issuer); err != nil {
		return nil, err
	}
	err := s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.ws.ManageSettings(ctx, tx, p, orgID); err != nil {
			return err
		}
		var err error
		if c.Domains, err = checkDomains(ctx, tx, orgID, *in.Domains); err != nil {
			return err
		}
		if in.Mapping != nil {
			if c.Mapping, err = checkMapping(ctx, tx, orgID, *in.Mapping); err != nil {
				return err
			}
		}
		if err := tx.LockOrg(ctx, orgID); err != nil {
			return gatehouse.Internal("lock org", err)
		}
		cs, err := tx.ListConnections(ctx, orgID)
		if err != nil {
			return gatehouse.Internal("count sso connections", err)
		}
		if len(cs) >= MaxConnections {
			return gatehouse.Errorf(gatehouse.KindConflict, "a workspace may have at most %d SSO connections; delete one first", MaxConnections)
		}
		if err := tx.CreateConnection(ctx, c); err != nil {
			return gatehouse.Internal("create sso connection", err)
		}
		if err := tx.BindDomains(ctx, c.ID, c.Domains); errors.Is(err, gatehouse.ErrConflict) {
			return errDomainTaken
		} else if err != nil {
			return gatehouse.Internal("bind domains", err)
		}
		if c.Enforce {
			if err := tx.EndSessions(ctx, orgID, c.Domains, now); err != nil {
				return gatehouse.Internal("end sessions", err)
			}
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "sso.connection_created", "sso_connection", c.ID,
			map[string]any{"protocol": c.protocol(), "issuer": c.Issuer, "domains": c.Domains, "enforce": c.Enforce, "default_role": c.DefaultRole,
				"attribute_mapping": c.Mapping})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// UpdateConnection changes a connection. Turning enforce on, or binding
// more domains to an enforcing one, ends the sessions their addresses
// opened otherwise (owners' excepted).
func (s *Service) UpdateConnection(ctx context.Context, p *gatehouse.Principal, orgID, id string, in Input) (*Connection, error) {
	if in.Issuer != nil {
		iss, err := s.checkIssuer(*in.Issuer)
		if err != nil {
			return nil, err
		}
		if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
			return nil, err
		}
		if _, err := s.discover(ctx, iss); err != nil {
			return nil, err
		}
	}
	md, err := s.prepareSAML(ctx, p, orgID, in.SAML)
	if err != nil {
		return nil, err
	}
	var out *Connection
	err = s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.ws.ManageSettings(ctx, tx, p, orgID); err != nil {
			return err
		}
		c, err := connOf(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		was := c.Enforce
		if err := s.applyAny(&in, c, md); err != nil {
			return err
		}
		if in.Mapping != nil {
			if c.Mapping, err = checkMapping(ctx, tx, orgID, *in.Mapping); err != nil {
				return err
			}
		}
		if in.Domains != nil {
			if c.Domains, err = checkDomains(ctx, tx, orgID, *in.Domains); err != nil {
				return err
			}
			if err := tx.BindDomains(ctx, c.ID, c.Domains); errors.Is(err, gatehouse.ErrConflict) {
				return errDomainTaken
			} else if err != nil {
				return gatehouse.Internal("bind domains", err)
			}
		}
		c.UpdatedAt = s.Now()
		if err := tx.UpdateConnection(ctx, c); errors.Is(err, gatehouse.ErrNotFound) {
			return errConnNotFound
		} else if err != nil {
			return gatehouse.Internal("update sso connection", err)
		}
		if c.Enforce && (!was || in.Domains != nil) {
			if err := tx.EndSessions(ctx, orgID, c.Domains, c.UpdatedAt); err != nil {
				return gatehouse.Internal("end sessions", err)
			}
		}
		out = c
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "sso.connection_updated", "sso_connection", c.ID,
			map[string]any{"fields": in.fields(), "enforce": c.Enforce, "attribute_mapping": c.Mapping})
	})
	return out, err
}

// DeleteConnection removes a connection, its domains and its links.
func (s *Service) DeleteConnection(ctx context.Context, p *gatehouse.Principal, orgID, id string) error {
	if err := s.id.RequireRecentAuth(ctx, p, "delete an SSO connection"); err != nil {
		return err
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.ws.ManageSettings(ctx, tx, p, orgID); err != nil {
			return err
		}
		c, err := connOf(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteConnection(ctx, c.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return errConnNotFound
		} else if err != nil {
			return gatehouse.Internal("delete sso connection", err)
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "sso.connection_deleted", "sso_connection", c.ID,
			map[string]any{"issuer": c.Issuer, "domains": c.Domains})
	})
}
