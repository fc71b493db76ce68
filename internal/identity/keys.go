package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// keyTouchThreshold is how often at most last_used_at of a key is written.
const keyTouchThreshold = time.Minute

// CreateUserKey creates a personal key acting as the caller in one of their
// workspaces (default: the personal org). Any role input is ignored.
func (s *Service) CreateUserKey(ctx context.Context, p *gatehouse.Principal, in workspace.KeyInput) (*workspace.NewKey, error) {
	name, err := workspace.CheckName("name", in.Name)
	if err != nil {
		return nil, err
	}
	tools, err := workspace.KeyTools(in.Tools, in.ToolsSet)
	if err != nil {
		return nil, err
	}
	expires, err := s.ws.KeyExpiry(in.ExpiresInDays)
	if err != nil {
		return nil, err
	}
	var out *workspace.NewKey
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := s.recentSession(ctx, tx, p, "create an API key"); err != nil {
			return err
		}
		orgID := in.OrgID
		if orgID == "" {
			u, err := workspace.Caller(ctx, tx, p.UserID)
			if err != nil {
				return err
			}
			o, err := s.ws.PersonalOrg(ctx, tx, u)
			if err != nil {
				return err
			}
			orgID = o.ID
		} else if o, _, err := workspace.LiveMember(ctx, tx, orgID, p.UserID); errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindForbidden, "you are not a member of org %s", orgID)
		} else if err != nil {
			return internal("membership", err)
		} else if err := o.Admits(p.Assurance); err != nil {
			// The key would carry this session's level, which the org refuses.
			return err
		}
		secret := token.NewSecret(workspace.UserKeyPrefix)
		k := &workspace.APIKey{ID: gatehouse.NewID(), Kind: workspace.KeyUser, UserID: p.UserID, OrgID: orgID, Name: name, Tools: tools,
			Prefix: secret[:workspace.KeyDisplayPrefix], Hash: token.Hash(secret), CreatedBy: p.UserID, CreatedAt: s.Now(), ExpiresAt: expires,
			AAL: p.AAL}
		if err := tx.CreateAPIKey(ctx, k); err != nil {
			return internal("create key", err)
		}
		out = &workspace.NewKey{Key: k, Secret: secret}
		if err := s.ws.Audit(ctx, tx, orgID, p.UserID, "api_key.created", "api_key", k.ID, map[string]any{"kind": workspace.KeyUser, "name": name, "tools": tools}); err != nil {
			return err
		}
		return s.notifyf(ctx, tx, p.UserID, "A personal API key named “%s” was made for your account: it acts as you.", name)
	})
	return out, err
}

// UserKeys lists the caller's unrevoked personal keys, newest first.
func (s *Service) UserKeys(ctx context.Context, p *gatehouse.Principal) ([]workspace.APIKey, error) {
	ks, err := s.store.ListAPIKeys(ctx, workspace.KeyUser, p.UserID, "")
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
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (k.Kind != workspace.KeyUser || k.UserID != p.UserID || k.RevokedAt != nil)) {
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
		return s.ws.Audit(ctx, tx, k.OrgID, p.UserID, "api_key.revoked", "api_key", k.ID, map[string]any{"kind": k.Kind, "name": k.Name})
	})
}

// ExchangeKey trades an API key for a short-lived access token. User keys
// re-read the user's live membership each time; org keys act with their
// fixed role. Tools are the org's enabled tools within the key's allowlist.
//
// Each exchange is a security event naming the key (never its secret):
// a log line only, as it is on the hot path of every key's client.
func (s *Service) ExchangeKey(ctx context.Context, secret string) (*workspace.OrgToken, error) {
	var seen keySeen
	ot, err := s.exchangeKey(ctx, secret, &seen)
	attrs := []slog.Attr{slog.String("method", MethodAPIKey)}
	if seen.id != "" {
		attrs = append(attrs, slog.String("key_id", seen.id), slog.String("org_id", seen.org))
	}
	if seen.user != "" {
		attrs = append(attrs, slog.String("user_id", seen.user))
	}
	if err != nil {
		s.event(ctx, gatehouse.EventKeyExchangeFailure, append(attrs, reason(err))...)
		return nil, err
	}
	s.event(ctx, gatehouse.EventKeyExchange, attrs...)
	return ot, nil
}

// keySeen is what a key exchange found of its key, for its event.
type keySeen struct{ id, org, user string }

// exchangeKey is ExchangeKey without its event; it fills seen once the
// key is found.
func (s *Service) exchangeKey(ctx context.Context, secret string, seen *keySeen) (*workspace.OrgToken, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("api_key is required")
	}
	if !strings.HasPrefix(secret, workspace.UserKeyPrefix) && !strings.HasPrefix(secret, workspace.OrgKeyPrefix) {
		return nil, workspace.ErrBadKey
	}
	hash := token.Hash(secret)
	k, err := s.store.APIKeyByHash(ctx, hash)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, workspace.ErrBadKey
	}
	if err != nil {
		return nil, internal("find key", err)
	}
	*seen = keySeen{id: k.ID, org: k.OrgID, user: k.UserID}
	now := s.Now()
	if subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hash)) != 1 || !k.Usable(now) {
		return nil, workspace.ErrBadKey
	}
	if err := s.keyOwnerEnabled(ctx, k); err != nil {
		return nil, err
	}
	// A user key reads its user's live role; an org key has no member row.
	o, member, err := s.store.OrgRole(ctx, k.OrgID, k.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && o.DeletedAt != nil) {
		return nil, workspace.ErrBadKey
	}
	if err != nil {
		return nil, internal("find org", err)
	}
	subject, role := k.ID, k.Role
	if k.Kind == workspace.KeyUser {
		if member == "" {
			return nil, workspace.ErrBadKey
		}
		subject, role = k.UserID, member
	}
	// The token carries the level of the session that made the key; a
	// workspace that requires more refuses it here rather than mint it.
	lvl := gatehouse.Assurance{AAL: k.AAL}.Level(gatehouse.ViaAPIKey)
	if err := o.Admits(lvl); err != nil {
		return nil, err
	}
	enabled, err := s.ws.EnabledTools(ctx, s.store, o)
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
	oc := &workspace.OrgContext{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: role, Tools: tools}
	c := oc.Claims("", gatehouse.ViaAPIKey, lvl)
	c.KeyID = k.ID // names the key, so revoking it refuses the token
	access, exp, err := token.Issue(ctx, s.signer, s.issuer, c, subject, now, KeyTokenTTL)
	if err != nil {
		return nil, internal("mint", err)
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= keyTouchThreshold {
		if err := s.store.TouchAPIKey(ctx, k.ID, now, now.Add(-keyTouchThreshold)); err != nil {
			s.log.Warn("api key last_used_at not stored", "err", err)
		}
	}
	return &workspace.OrgToken{AccessToken: access, ExpiresAt: exp, Org: oc}, nil
}
