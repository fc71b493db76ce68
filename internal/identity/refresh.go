package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

var errBadRefresh = gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid or expired refresh token")

// Refresh rotates a refresh token presented by the client meta: the
// presented one is revoked and a new pair issued. A token presented again
// after its rotation answers 401; more than RefreshReuseSkew after the
// rotation that is taken as theft and the whole session is revoked, while
// inside the window it is two tabs racing, unless the client differs from
// the session's in both IP and User-Agent: that is theft too (ASVS 10.4.5).
//
// Everything that only reads (the session, the user, the org the new token
// is scoped to) happens before the one write that decides: the session is
// still live, the token is rotated exactly once, its successor is stored.
func (s *Service) Refresh(ctx context.Context, secret string, meta gatehouse.SessionMeta) (*SignIn, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("refresh_token is required")
	}
	if sid, hash := splitRefresh(secret); sid != "" {
		if si, ok, err := s.refreshOnce(ctx, sid, hash); ok {
			return si, err
		}
	}
	return s.refresh(ctx, secret, &meta, "", nil)
}

// A refresh token is its session's id, a dot and 256 random bits, so that
// a refresh finds its session by primary key (the session row holds the
// live token's hash). Tokens issued before they named their session are
// plain random text: the history names their session (RefreshSessionOf).

// newRefresh returns a new refresh token of session sid and its hash.
func newRefresh(sid string) (secret, hash string) {
	secret = token.NewSecret(sid + ".")
	return secret, token.Hash(secret)
}

// splitRefresh returns the session a refresh token's text names ("" when
// it names none) and the token's hash.
func splitRefresh(secret string) (sid, hash string) {
	if id, _, ok := strings.Cut(secret, "."); ok && gatehouse.IsID(id) {
		sid = id
	}
	return sid, token.Hash(secret)
}

// refreshOwner returns the session of a refresh token, from its text or,
// for an older token, from the history, and the token's hash;
// gatehouse.ErrNotFound when the token names no session.
func (s *Service) refreshOwner(ctx context.Context, secret string) (sid, hash string, err error) {
	if sid, hash = splitRefresh(secret); sid == "" {
		sid, err = s.store.RefreshSessionOf(ctx, hash)
	}
	return sid, hash, err
}

// refreshOnce is the common refresh of a live sign-in session in one step
// where the store can (PostgreSQL: one statement; SQLite: one write
// transaction, each shared by the refreshes that queue together): check
// and rotate first, then
// scope the new token as refresh does. ok is false when nothing was
// rotated: refresh then finds out why (expired, revoked, reused, an OAuth
// grant's session) on its careful path.
func (s *Service) refreshOnce(ctx context.Context, sid, hash string) (*SignIn, bool, error) {
	now := s.Now()
	next, nextHash := newRefresh(sid)
	successor := &RefreshToken{Hash: nextHash, CreatedAt: now}
	read, ok, err := s.store.RefreshOnce(ctx, sid, hash, successor, s.policy)
	if err != nil {
		return nil, true, internal("rotate refresh token", err)
	}
	if !ok {
		return nil, false, nil
	}
	u, lvl := read.User, read.Session.Level.Level(read.Session.Via)
	var oc *workspace.OrgContext
	if o := read.Org; o != nil && o.DeletedAt == nil && read.Role != "" && o.Admits(lvl) == nil {
		oc, err = s.ws.OrgContext(ctx, s.store, o, read.Role)
	} else {
		// The default org is gone, or requires a level the session lacks:
		// the new token goes to the home org, or the personal one.
		err = s.store.Tx(ctx, func(tx Store) (err error) {
			if oc, err = s.ws.HomeOrg(ctx, tx, u); err != nil {
				return err
			}
			oc, err = s.scoped(ctx, tx, u, oc, lvl)
			return err
		})
	}
	if err != nil {
		return nil, true, err
	}
	access, exp, err := s.mintUntil(s.policy.AbsoluteEnd(read.Session.CreatedAt), u.ID, read.Session.ID, gatehouse.ViaRefresh, lvl, oc, s.accessTTL(read.Session, now))
	if err != nil {
		return nil, true, internal("mint", err)
	}
	return &SignIn{AccessToken: access, ExpiresAt: exp, RefreshToken: next, User: u, Org: oc, SessionID: read.Session.ID, GrantID: read.Session.GrantID}, true, nil
}

// refresh is Refresh of the token secret with an extra check of the
// session (OAuth refreshes bind the token to its client); check's error
// rolls the rotation back. meta is nil when the presenting client is not
// compared (OAuth clients are bound by their client id instead). scope,
// when not empty, is the narrower scope of an OAuth session's new access
// token (check has made sure it is within the grant's).
func (s *Service) refresh(ctx context.Context, secret string, meta *gatehouse.SessionMeta, scope string, check func(tx Store, sess *Session) error) (*SignIn, error) {
	sid, hash, err := s.refreshOwner(ctx, secret)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errBadRefresh
	}
	if err != nil {
		return nil, internal("find refresh token", err)
	}
	read, now, err := s.liveRefresh(ctx, sid, hash, meta)
	if err != nil {
		return nil, err
	}
	sess, u := read.Session, read.User
	lvl := sess.Level.Level(sess.Via)
	// The scope of the new token: the session's fixed org (OAuth grants)
	// while the user is still a member there, else the default org. When
	// that is gone too, homeOrg finds or makes one in the transaction. No
	// token is minted for a workspace whose policy the session's level
	// misses: an OAuth session's refresh is refused, a sign-in's token
	// goes to the personal workspace (scoped).
	var oc *workspace.OrgContext
	if o := read.Org; o != nil && o.DeletedAt == nil && read.Role != "" {
		if err := o.Admits(lvl); err != nil && sess.OrgID != "" {
			return nil, err
		} else if err == nil {
			if oc, err = s.ws.OrgContext(ctx, s.store, o, read.Role); err != nil {
				return nil, err
			}
		}
	} else if sess.OrgID != "" {
		return nil, errBadRefresh
	}
	via := gatehouse.ViaRefresh
	if sess.Via == gatehouse.ViaOAuth {
		via = gatehouse.ViaOAuth
	}
	next, nextHash := newRefresh(sess.ID)
	// The successor, and the session, live the policy's idle time more,
	// but never past the session's absolute lifetime (ASVS 7.3.2).
	successor := &RefreshToken{Hash: nextHash, SessionID: sess.ID, CreatedAt: now, ExpiresAt: s.policy.End(sess.CreatedAt, now)}
	if sess.Level.Pending {
		successor.ExpiresAt = sess.ExpiresAt // refreshing never extends the time to take the step
	}
	var bound binding
	if check == nil && sess.Via != gatehouse.ViaOAuth && oc != nil {
		// The common case writes nothing but the rotation: no transaction.
		err = s.store.RotateRefresh(ctx, hash, successor)
	} else {
		err = s.store.Tx(ctx, func(tx Store) error {
			if err := tx.RotateRefresh(ctx, hash, successor); err != nil {
				return err
			}
			if check != nil {
				if err := check(tx, sess); err != nil {
					return err
				}
			}
			if sess.Via == gatehouse.ViaOAuth {
				if bound, err = grantBinding(ctx, tx, sess); err != nil {
					return err
				}
				if scope != "" {
					bound.scope = scope
				}
			}
			if oc == nil {
				if oc, err = s.ws.HomeOrg(ctx, tx, u); err != nil {
					return err
				}
				if oc, err = s.scoped(ctx, tx, u, oc, lvl); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		// The session was revoked meanwhile, or another request rotated the
		// token first: look at when it was rotated.
		if cur, err := s.store.RefreshToken(ctx, sid, hash); err == nil && cur.RotatedAt != nil {
			return nil, s.refreshReused(ctx, cur, nil, meta, now)
		}
		return nil, errBadRefresh
	}
	if err != nil {
		return nil, internal("rotate refresh token", err)
	}
	access, exp, err := s.mintUntil(s.policy.AbsoluteEnd(sess.CreatedAt), u.ID, sess.ID, via, lvl, oc, s.accessTTL(sess, now), bound)
	if err != nil {
		return nil, internal("mint", err)
	}
	out := &SignIn{AccessToken: access, ExpiresAt: exp, RefreshToken: next, User: u, Org: oc, Scope: bound.scope, SessionID: sess.ID, GrantID: sess.GrantID}
	if sess.Level.Pending {
		// Still owing the second factor: say which, as the sign-in did.
		if out.Factors, err = s.sessionFactors(ctx, u.ID, sess.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// accessTTL is the life of an access token refreshed at now for sess: a
// session owing its second factor gives none past its own end.
func (s *Service) accessTTL(sess *Session, now time.Time) time.Duration {
	if sess.Level.Pending && sess.ExpiresAt.Sub(now) < AccessTTL {
		return sess.ExpiresAt.Sub(now)
	}
	return AccessTTL
}

// liveRefresh reads session sid with its refresh token hashed hash and
// checks that the token may rotate now: unexpired, not yet rotated (else
// reuse is handled) and its session not revoked. It returns the time it
// checked at.
func (s *Service) liveRefresh(ctx context.Context, sid, hash string, meta *gatehouse.SessionMeta) (*RefreshRead, time.Time, error) {
	read, err := s.store.RefreshSession(ctx, sid, hash)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, time.Time{}, errBadRefresh
	}
	if err != nil {
		return nil, time.Time{}, internal("find refresh token", err)
	}
	now := s.Now()
	if !now.Before(read.Token.ExpiresAt) {
		return nil, now, errBadRefresh
	}
	if read.Token.RotatedAt != nil {
		return nil, now, s.refreshReused(ctx, read.Token, read.Session, meta, now)
	}
	if !s.policy.Refreshable(read.Session, now) {
		// Revoked, or past the absolute lifetime (checked here too because
		// the setting may have been lowered since the token was issued).
		return nil, now, errBadRefresh
	}
	return read, now, nil
}

// refreshReused answers a rotated token presented again by meta: 401, and
// the whole session is revoked past the race window, or inside it when
// meta is another client than the session's (sess, read when nil).
func (s *Service) refreshReused(ctx context.Context, rt *RefreshToken, sess *Session, meta *gatehouse.SessionMeta, now time.Time) error {
	why := ""
	if now.Sub(*rt.RotatedAt) > RefreshReuseSkew {
		why = "refresh token reused after rotation; session revoked"
	} else if meta != nil {
		if sess == nil {
			var err error
			if sess, err = s.store.SessionByID(ctx, rt.SessionID); err != nil {
				return errBadRefresh
			}
		}
		if otherClient(sess, *meta) {
			why = "rotated refresh token presented by another client; session revoked"
		}
	}
	if why == "" {
		return errBadRefresh
	}
	if ok, err := s.store.RevokeSession(ctx, rt.SessionID, now); err != nil {
		return internal("revoke session", err)
	} else if ok {
		s.log.Warn(why, "session_id", rt.SessionID)
	}
	return errBadRefresh
}

// otherClient reports whether meta differs from the client that opened
// sess in both IP and User-Agent: two tabs of one browser share both, and
// a phone changing networks keeps its User-Agent.
func otherClient(sess *Session, meta gatehouse.SessionMeta) bool {
	return sess.IP != meta.IP && sess.UserAgent != truncate(meta.UserAgent, 512)
}
