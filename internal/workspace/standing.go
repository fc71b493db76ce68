package workspace

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// memberKey names a token subject (a user, or an org key) in one org, at
// a token's level (aal2 or not), which the org's two-factor policy reads.
type memberKey struct {
	subject, org string
	aal2         bool
}

// ToolAccess checks, for a tool-API request, that the caller behind p
// still stands in the token's workspace: a member of the live org, or that
// org's live service-account key. A token's claims outlive a removal, an
// account or org deletion or a key revocation by up to its lifetime; this
// read ends them within cache.TTL. A removed member and a deleted org read
// as not found, as on org routes; a deleted account or a revoked or expired
// org key is 401. The answer is kept per subject and org for cache.TTL, so a
// busy token costs one read every 2 s.
func (s *Service) ToolAccess(ctx context.Context, p *gatehouse.Principal) error {
	k := memberKey{p.UserID, p.OrgID, p.AAL == gatehouse.AAL2}
	now := s.Now()
	if err, ok := s.members.Get(k, now); ok {
		return err
	}
	err := s.toolAccess(ctx, p)
	if err == nil || gatehouse.ErrorKind(err) != gatehouse.KindInternal {
		s.members.Put(k, err, now)
	}
	return err
}

func (s *Service) toolAccess(ctx context.Context, p *gatehouse.Principal) error {
	_, err := s.orgAccess(ctx, s.store, p, p.OrgID)
	if !errors.Is(err, errOrgNotFound) {
		return err
	}
	// Not in the workspace: is anyone still behind the token?
	if _, err := s.store.UserByID(ctx, p.UserID); err == nil {
		return errOrgNotFound
	} else if !errors.Is(err, gatehouse.ErrNotFound) {
		return gatehouse.Internal("find user", err)
	}
	if p.Via == gatehouse.ViaAPIKey {
		// An org key's token: its subject is the key.
		k, err := s.store.APIKeyByID(ctx, p.UserID)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Internal("find key", err)
		}
		if err == nil && k.Kind == KeyOrg {
			if !k.Usable(s.Now()) {
				return ErrBadKey
			}
			return errOrgNotFound // a live key of a deleted org
		}
	}
	return errNoAccount
}

// forgetStanding drops the cached standing of subject in org, after a
// change made through this instance.
func (s *Service) forgetStanding(subject, org string) {
	s.members.Drop(memberKey{subject, org, false})
	s.members.Drop(memberKey{subject, org, true})
}

// ForgetStandings drops every cached standing, after a change that ends
// many (an account deleted from every org it was in).
func (s *Service) ForgetStandings() { s.members.Clear() }

// ErrBadKey answers an API key that is unknown, revoked or expired.
var ErrBadKey = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, revoked or expired API key")
