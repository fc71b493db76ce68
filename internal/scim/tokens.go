package scim

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// tokenDisplayPrefix is how many characters of a secret are kept to show.
const tokenDisplayPrefix = 12

// NewToken is a created token and its secret, shown only once.
type NewToken struct {
	Token  *Token
	Secret string
}

var (
	errTokenNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "scim token not found")
	// ErrBadToken answers a SCIM request without a live token.
	ErrBadToken = gatehouse.Errorf(gatehouse.KindUnauthorized, "missing, invalid or deleted SCIM token")
)

// manage checks that p may manage SCIM in org orgID through st: an owner
// or admin (org.settings.manage) of a team org, at the org's two-factor
// policy. Another workspace reads as not found.
func (s *Service) manage(ctx context.Context, st workspace.Tables, p *gatehouse.Principal, orgID string) error {
	o, role, err := s.ws.OrgAccess(ctx, st, p, orgID)
	if err != nil {
		return err
	}
	if err := o.Admits(p.Assurance); err != nil {
		return err
	}
	if o.Kind != workspace.OrgTeam {
		return gatehouse.Errorf(gatehouse.KindForbidden, "SCIM provisioning is for team organizations only, not a personal workspace")
	}
	if !workspace.RoleHas(role, workspace.PermSettings) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "your role (%s) lacks the %s permission", role, workspace.PermSettings)
	}
	return nil
}

// Tokens lists org orgID's live SCIM tokens, newest first.
func (s *Service) Tokens(ctx context.Context, p *gatehouse.Principal, orgID string) ([]Token, error) {
	if err := s.manage(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	ts, err := s.store.Tokens(ctx, orgID)
	if err != nil {
		return nil, gatehouse.Internal("list scim tokens", err)
	}
	return ts, nil
}

// CreateToken creates a SCIM token of org orgID named name; its secret is
// returned once and kept hashed.
func (s *Service) CreateToken(ctx context.Context, p *gatehouse.Principal, orgID, name string) (*NewToken, error) {
	if s.recentAuth != nil {
		if err := s.recentAuth(ctx, p, "create a SCIM token"); err != nil {
			return nil, err
		}
	}
	var out *NewToken
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.manage(ctx, tx, p, orgID); err != nil {
			return err
		}
		name, err := workspace.CheckName("name", name)
		if err != nil {
			return err
		}
		secret := token.NewSecret(TokenPrefix)
		t := &Token{ID: gatehouse.NewID(), OrgID: orgID, Name: name, Prefix: secret[:tokenDisplayPrefix], Hash: token.Hash(secret),
			CreatedBy: p.UserID, CreatedAt: s.Now()}
		if err := tx.CreateToken(ctx, t); err != nil {
			return gatehouse.Internal("create scim token", err)
		}
		out = &NewToken{Token: t, Secret: secret}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "scim_token.created", "scim_token", t.ID, map[string]any{"name": name})
	})
	return out, err
}

// DeleteToken deletes a SCIM token of org orgID: every SCIM request reads
// its token's row, so it is refused from the next request on, on every
// instance.
func (s *Service) DeleteToken(ctx context.Context, p *gatehouse.Principal, orgID, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		if err := s.manage(ctx, tx, p, orgID); err != nil {
			return err
		}
		if !gatehouse.IsID(id) {
			return errTokenNotFound
		}
		if err := tx.DeleteToken(ctx, orgID, id, s.Now()); errors.Is(err, gatehouse.ErrNotFound) {
			return errTokenNotFound
		} else if err != nil {
			return gatehouse.Internal("delete scim token", err)
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, "scim_token.deleted", "scim_token", id, nil)
	})
}

// Authenticate returns the live token of secret: one indexed read per
// request, no cache, so a deleted token stops at once everywhere.
func (s *Service) Authenticate(ctx context.Context, secret string) (*Token, error) {
	if len(secret) <= len(TokenPrefix) || secret[:len(TokenPrefix)] != TokenPrefix {
		return nil, ErrBadToken
	}
	t, err := s.store.TokenByHash(ctx, token.Hash(secret))
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, ErrBadToken
	}
	if err != nil {
		return nil, gatehouse.Internal("find scim token", err)
	}
	return t, nil
}
