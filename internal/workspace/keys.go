package workspace

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
)

// API key constants.
const (
	UserKeyPrefix    = "svc_u_"
	OrgKeyPrefix     = "svc_o_"
	KeyDisplayPrefix = 12   // characters of the key kept for display
	DefaultKeyDays   = 365  // expires_in_days null
	MaxKeyDays       = 3650 // largest expires_in_days
)

// KeyInput is the body that creates an API key.
type KeyInput struct {
	Name          string
	OrgID         string
	Role          string
	Tools         []string
	ToolsSet      bool // tools was present in the body
	ExpiresInDays *int
}

// NewKey is a created key and its secret, which is shown only once.
type NewKey struct {
	Key    *APIKey
	Secret string
}

// KeyExpiry applies CONTRACT §4: null → 365 days, 0 → never, 1..3650 days.
func (s *Service) KeyExpiry(days *int) (*time.Time, error) {
	n := DefaultKeyDays
	if days != nil {
		n = *days
	}
	if n < 0 || n > MaxKeyDays {
		return nil, gatehouse.InvalidField("expires_in_days", "expires_in_days must be null, 0 (never) or 1 to %d", MaxKeyDays)
	}
	if n == 0 {
		return nil, nil
	}
	t := s.Now().Add(time.Duration(n) * 24 * time.Hour)
	return &t, nil
}

// KeyTools validates an allowlist: known tools, canonical order, no
// repeats; absent means all seven.
func KeyTools(in []string, set bool) ([]string, error) {
	if !set || in == nil {
		return append([]string(nil), Tools...), nil
	}
	want := map[string]bool{}
	for _, t := range in {
		if !IsTool(t) {
			return nil, gatehouse.InvalidField("tools", "unknown tool %q: tools are %s", t, strings.Join(Tools, ", "))
		}
		want[t] = true
	}
	out := []string{}
	for _, t := range Tools {
		if want[t] {
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckName trims a name given in field and checks its length and that
// it is one line (gatehouse.CheckOneLine).
func CheckName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if err := gatehouse.CheckOneLine(field, name); err != nil {
		return "", err
	}
	if name == "" {
		return "", gatehouse.InvalidField(field, "%s is required", field)
	}
	if n := len([]rune(name)); n < 2 || n > MaxName {
		return "", gatehouse.InvalidField(field, "%s must be 2 to %d characters", field, MaxName)
	}
	return name, nil
}

// OrgKeys lists an org's unrevoked service-account keys, newest first.
func (s *Service) OrgKeys(ctx context.Context, p *gatehouse.Principal, orgID string) ([]APIKey, error) {
	if _, err := s.authorize(ctx, s.store, p, orgID, PermSettings, false); err != nil {
		return nil, err
	}
	ks, err := s.store.ListAPIKeys(ctx, KeyOrg, "", orgID)
	if err != nil {
		return nil, gatehouse.Internal("list keys", err)
	}
	return ks, nil
}

// CreateOrgKey creates a service-account key of a team org acting with a
// fixed role: member (default), billing or admin, never owner.
func (s *Service) CreateOrgKey(ctx context.Context, p *gatehouse.Principal, orgID string, in KeyInput) (*NewKey, error) {
	if s.recentAuth != nil {
		if err := s.recentAuth(ctx, p, "create an API key"); err != nil {
			return nil, err
		}
	}
	var out *NewKey
	err := s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.authorize(ctx, tx, p, orgID, PermSettings, true); err != nil {
			return err
		}
		name, err := CheckName("name", in.Name)
		if err != nil {
			return err
		}
		role := in.Role
		if role == "" {
			role = RoleMember
		}
		if role != RoleMember && role != RoleBilling && role != RoleAdmin {
			return gatehouse.InvalidField("role", "role must be member, billing or admin")
		}
		tools, err := KeyTools(in.Tools, in.ToolsSet)
		if err != nil {
			return err
		}
		expires, err := s.KeyExpiry(in.ExpiresInDays)
		if err != nil {
			return err
		}
		secret := token.NewSecret(OrgKeyPrefix)
		k := &APIKey{ID: gatehouse.NewID(), Kind: KeyOrg, OrgID: orgID, Name: name, Role: role, Tools: tools,
			Prefix: secret[:KeyDisplayPrefix], Hash: token.Hash(secret), CreatedBy: p.UserID, CreatedAt: s.Now(), ExpiresAt: expires,
			AAL: p.AAL} // its tokens carry the creator's level, as a personal key's do
		if err := tx.CreateAPIKey(ctx, k); err != nil {
			return gatehouse.Internal("create key", err)
		}
		out = &NewKey{Key: k, Secret: secret}
		return s.Audit(ctx, tx, orgID, p.UserID, "api_key.created", "api_key", k.ID, map[string]any{"kind": KeyOrg, "name": name, "role": role, "tools": tools})
	})
	return out, err
}

// RevokeOrgKey revokes one of an org's service-account keys.
func (s *Service) RevokeOrgKey(ctx context.Context, p *gatehouse.Principal, orgID, id string) error {
	notFound := gatehouse.Errorf(gatehouse.KindNotFound, "api key not found")
	defer s.forgetStanding(id, orgID)
	return s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.authorize(ctx, tx, p, orgID, PermSettings, false); err != nil {
			return err
		}
		if !gatehouse.IsID(id) {
			return notFound
		}
		k, err := tx.APIKeyByID(ctx, id)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (k.Kind != KeyOrg || k.OrgID != orgID || k.RevokedAt != nil)) {
			return notFound
		}
		if err != nil {
			return gatehouse.Internal("find key", err)
		}
		if err := tx.RevokeAPIKey(ctx, id, s.Now()); errors.Is(err, gatehouse.ErrNotFound) {
			return notFound
		} else if err != nil {
			return gatehouse.Internal("revoke key", err)
		}
		return s.Audit(ctx, tx, orgID, p.UserID, "api_key.revoked", "api_key", id, map[string]any{"kind": KeyOrg, "name": k.Name})
	})
}
