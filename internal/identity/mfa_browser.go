package identity

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// errNoPending answers a pending cookie that no longer stands for a sign-in
// owing its second factor.
var errNoPending = gatehouse.Errorf(gatehouse.KindUnauthorized, "this sign-in has expired; sign in again")

// PendingPrincipal is the principal of the sign-in whose refresh token the
// hosted pages kept while it owes its second factor, so that the step page
// can take that step. The token is read, not rotated: it is valid only
// unexpired and unrotated, of a live session that is still pending (a
// finished step revokes it). Anything else is 401.
func (s *Service) PendingPrincipal(ctx context.Context, refreshSecret string) (*gatehouse.Principal, error) {
	if refreshSecret == "" {
		return nil, errNoPending
	}
	sid, hash, err := s.refreshOwner(ctx, refreshSecret)
	var read *RefreshRead
	if err == nil {
		read, err = s.store.RefreshSession(ctx, sid, hash)
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errNoPending
	}
	if err != nil {
		return nil, internal("find refresh token", err)
	}
	now := s.Now()
	rt, sess := read.Token, read.Session
	if rt.RotatedAt != nil || !now.Before(rt.ExpiresAt) || sess.RevokedAt != nil || !now.Before(sess.ExpiresAt) ||
		!sess.Level.Pending || sess.Via == gatehouse.ViaOAuth || read.User == nil || read.User.ID != sess.UserID {
		return nil, errNoPending
	}
	return &gatehouse.Principal{UserID: sess.UserID, SessionID: sess.ID, Via: sess.Via, Assurance: sess.Level.Level(sess.Via)}, nil
}

// StepFactors are the second factors p's pending sign-in can present, as
// the sign-in named them: the step page offers one form for each.
func (s *Service) StepFactors(ctx context.Context, p *gatehouse.Principal) ([]string, error) {
	return s.sessionFactors(ctx, p.UserID, p.SessionID)
}
