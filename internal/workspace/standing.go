package workspace

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// memberKey names a token subject (a user, or an org key) in one org.
type memberKey struct{ subject, org string }

// standing is what ToolAccess keeps of a subject in an org: whether it may
// act there (err nil) and whether the org requires two-factor, which is
// held against each token's own level, so the cache never answers for a
// level.
type standing struct {
	err        error
	requireMFA bool
}

// ToolAccess checks, for a tool-API request, that the caller behind p
// still stands in the token's workspace: a member of the live org, or that
// org's live service-account key, at the level the org requires. A
// token's claims outlive a removal, an account or org deletion or a key
// revocation by up to its lifetime; this read ends them within cache.TTL.
// A removed member and a deleted org read as not found, as on org routes;
// a deleted account or a revoked or expired org key is 401; a token below
// the org's required level 403 (ErrMFAPolicy). The answer is kept per
// subject and org for cache.TTL, so a busy token costs one read every 2 s;
// but an org that began requiring two-factor lately (policyRaised: at
// once on this instance, within the revocation poll on the others) is
// read again for a token below aal2 rather than trusted from the cache.
func (s *Service) ToolAccess(ctx context.Context, p *gatehouse.Principal) error {
	k := memberKey{p.UserID, p.OrgID}
	now := s.Now()
	st, ok := s.members.Get(k, now)
	if ok && !st.requireMFA && p.AAL != gatehouse.AAL2 && s.policyRaised != nil && s.policyRaised(p.OrgID) {
		ok = false
	}
	if !ok {
		st = s.toolStanding(ctx, p)
		if st.err == nil || gatehouse.ErrorKind(st.err) != gatehouse.KindInternal {
			s.members.Put(k, st, now)
		}
	}
	if st.err != nil {
		return st.err
	}
	if st.requireMFA && p.AAL != gatehouse.AAL2 {
		return ErrMFAPolicy
	}
	return nil
}

// toolStanding reads p's standing in its token's org.
func (s *Service) toolStanding(ctx context.Context, p *gatehouse.Principal) standing {
	a, err := s.memberAccess(ctx, s.store, p, p.OrgID)
	if err == nil {
		return standing{requireMFA: a.org.RequireMFA}
	}
	if !errors.Is(err, errOrgNotFound) {
		return standing{err: err}
	}
	// Not in the workspace: is anyone still behind the token?
	if _, err := s.store.UserByID(ctx, p.UserID); err == nil {
		return standing{err: errOrgNotFound}
	} else if !errors.Is(err, gatehouse.ErrNotFound) {
		return standing{err: gatehouse.Internal("find user", err)}
	}
	if p.Via == gatehouse.ViaAPIKey {
		// An org key's token: its subject is the key.
		k, err := s.store.APIKeyByID(ctx, p.UserID)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return standing{err: gatehouse.Internal("find key", err)}
		}
		if err == nil && k.Kind == KeyOrg {
			if !k.Usable(s.Now()) {
				return standing{err: ErrBadKey}
			}
			return standing{err: errOrgNotFound} // a live key of a deleted org
		}
	}
	return standing{err: errNoAccount}
}

// forgetStanding drops the cached standing of subject in org, after a
// change made through this instance.
func (s *Service) forgetStanding(subject, org string) { s.members.Drop(memberKey{subject, org}) }

// ForgetStandings drops every cached standing, after a change that ends
// many (an account deleted from every org it was in).
func (s *Service) ForgetStandings() { s.members.Clear() }

// ErrBadKey answers an API key that is unknown, revoked or expired.
var ErrBadKey = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, revoked or expired API key")
