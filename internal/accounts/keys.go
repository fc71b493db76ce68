package accounts

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
)

// API key constants.
const (
	UserKeyPrefix     = "svc_u_"
	OrgKeyPrefix      = "svc_o_"
	KeyDisplayPrefix  = 12               // characters of the key kept for display
	KeyTokenTTL       = 15 * time.Minute // access tokens from key exchange
	DefaultKeyDays    = 365              // expires_in_days null
	MaxKeyDays        = 3650             // largest expires_in_days
	keyTouchThreshold = time.Minute      // last_used_at is written at most this often
	keyTokenVia       = gatehouse.ViaAPIKey
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

// keyExpiry applies CONTRACT §4: null → 365 days, 0 → never, 1..3650 days.
func (s *Service) keyExpiry(days *int) (*time.Time, error) {
	n := DefaultKeyDays
	if days != nil {
		n = *days
	}
	if n < 0 || n > MaxKeyDays {
		return nil, gatehouse.Invalid("expires_in_days must be null, 0 (never) or 1 to %d", MaxKeyDays)
	}
	if n == 0 {
		return nil, nil
	}
	t := s.Now().Add(time.Duration(n) * 24 * time.Hour)
	return &t, nil
}

// keyTools validates an allowlist: known tools, canonical order, no
// repeats; absent means all seven.
func keyTools(in []string, set bool) ([]string, error) {
	if !set || in == nil {
		return append([]string(nil), Tools...), nil
	}
	want := map[string]bool{}
	for _, t := range in {
		if !IsTool(t) {
			return nil, gatehouse.Invalid("unknown tool %q: tools are %s", t, strings.Join(Tools, ", "))
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

func checkName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", gatehouse.Invalid("%s is required", field)
	}
	if n := len([]rune(name)); n < 2 || n > MaxName {
		return "", gatehouse.Invalid("%s must be 2 to %d characters", field, MaxName)
	}
	return name, nil
}

// CreateUserKey creates a personal key acting as the caller in one of their
// workspaces (default: the personal org). Any role input is ignored.
func (s *Service) CreateUserKey(ctx context.Context, p *gatehouse.Principal, in KeyInput) (*NewKey, error) {
	name, err := checkName("name", in.Name)
	if err != nil {
		return nil, err
	}
	tools, err := keyTools(in.Tools, in.ToolsSet)
	if err != nil {
		return nil, err
	}
	expires, err := s.keyExpiry(in.ExpiresInDays)
	if err != nil {
		return nil, err
	}
	var out *NewKey
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := liveSession(ctx, tx, p, s.Now()); err != nil {
			return err
		}
		orgID := in.OrgID
		if orgID == "" {
			u, err := caller(ctx, tx, p.UserID)
			if err != nil {
				return err
			}
			o, err := s.personalOrg(ctx, tx, u)
			if err != nil {
				return err
			}
			orgID = o.ID
		} else if _, _, err := liveMember(ctx, tx, orgID, p.UserID); errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindForbidden, "you are not a member of org %s", orgID)
		} else if err != nil {
			return internal("membership", err)
		}
		secret := token.NewSecret(UserKeyPrefix)
		k := &APIKey{ID: gatehouse.NewID(), Kind: KeyUser, UserID: p.UserID, OrgID: orgID, Name: name, Tools: tools,
			Prefix: secret[:KeyDisplayPrefix], Hash: token.Hash(secret), CreatedBy: p.UserID, CreatedAt: s.Now(), ExpiresAt: expires}
		if err := tx.CreateAPIKey(ctx, k); err != nil {
			return internal("create key", err)
		}
		out = &NewKey{Key: k, Secret: secret}
		return s.audit(ctx, tx, orgID, p.UserID, "api_key.created", "api_key", k.ID, map[string]any{"kind": KeyUser, "name": name, "tools": tools})
	})
	return out, err
}

// UserKeys lists the caller's unrevoked personal keys, newest first.
func (s *Service) UserKeys(ctx context.Context, p *gatehouse.Principal) ([]APIKey, error) {
	ks, err := s.store.ListAPIKeys(ctx, KeyUser, p.UserID, "")
	if err != nil {
		return nil, internal("list keys", err)
	}
	return ks, nil
}

// RevokeUserKey revokes one of the caller's personal keys.
func (s *Service) RevokeUserKey(ctx context.Context, p *gatehouse.Principal, id string) error {
	notFound := gatehouse.Errorf(gatehouse.KindNotFound, "api key not found")
	if !gatehouse.IsID(id) {
		return notFound
	}
	return s.store.Tx(ctx, func(tx Store) error {
		k, err := tx.APIKeyByID(ctx, id)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (k.Kind != KeyUser || k.UserID != p.UserID || k.RevokedAt != nil)) {
			return notFound
		}
		if err != nil {
			return internal("find key", err)
		}
		if err := tx.RevokeAPIKey(ctx, id, s.Now()); err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) {
				return notFound
			}
			return internal("revoke key", err)
		}
		return s.audit(ctx, tx, k.OrgID, p.UserID, "api_key.revoked", "api_key", k.ID, map[string]any{"kind": k.Kind, "name": k.Name})
	})
}

var errBadKey = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, revoked or expired API key")

// ExchangeKey trades an API key for a short-lived access token. User keys
// re-read the user's live membership each time; org keys act with their
// fixed role. Tools are the org's enabled tools within the key's allowlist.
func (s *Service) ExchangeKey(ctx context.Context, secret string) (*OrgToken, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("api_key is required")
	}
	if !strings.HasPrefix(secret, UserKeyPrefix) && !strings.HasPrefix(secret, OrgKeyPrefix) {
		return nil, errBadKey
	}
	hash := token.Hash(secret)
	k, err := s.store.APIKeyByHash(ctx, hash)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, internal("find key", err)
	}
	now := s.Now()
	if subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hash)) != 1 || !k.Usable(now) {
		return nil, errBadKey
	}
	// A user key reads its user's live role; an org key has no member row.
	o, member, err := s.store.OrgRole(ctx, k.OrgID, k.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && o.DeletedAt != nil) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, internal("find org", err)
	}
	subject, role := k.ID, k.Role
	if k.Kind == KeyUser {
		if member == "" {
			return nil, errBadKey
		}
		subject, role = k.UserID, member
	}
	enabled, err := s.enabledTools(ctx, s.store, o)
	if err != nil {
		return nil, internal("tools", err)
	}
	allowed := map[string]bool{}
	for _, t := range k.Tools {
		allowed[t] = true
	}
	tools := []string{}
	for _, t := range enabled {
		if allowed[t] {
			tools = append(tools, t)
		}
	}
	oc := &OrgContext{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: role, Tools: tools}
	access, exp, err := s.mint(subject, "", keyTokenVia, oc, KeyTokenTTL)
	if err != nil {
		return nil, internal("mint", err)
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= keyTouchThreshold {
		if err := s.store.TouchAPIKey(ctx, k.ID, now, now.Add(-keyTouchThreshold)); err != nil {
			s.log.Warn("api key last_used_at not stored", "err", err)
		}
	}
	return &OrgToken{AccessToken: access, ExpiresAt: exp, Org: oc}, nil
}
