package identity

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Token introspection (RFC 7662) asks the domain what a token is and
// whether it is live. The protocol (who may ask, what the answer looks
// like, which workspace may learn what) is internal/oauth's
// (introspect.go); the judgement of liveness is the one the rest of the
// service applies, not a copy of it.

// Kinds of token introspection tells apart (TokenInfo.Kind).
const (
	TokenAccess  = "access_token"
	TokenRefresh = "refresh_token"
)

// TokenInfo is what introspection tells of a live token.
type TokenInfo struct {
	Kind    string // TokenAccess or TokenRefresh
	Subject string // the user, or the org key of a workspace key's token
	// ClientID and Scope are those of the OAuth grant the token was
	// issued under; "" for a sign-in's or a key's token.
	ClientID string
	Scope    string
	// Audience is an access token's aud; nil for a refresh token.
	Audience []string
	// Issuer is an access token's iss; "" for a refresh token (the
	// authorization server is its issuer).
	Issuer    string
	OrgID     string // the workspace the token acts in
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// sessionGrant is what introspection keeps of an OAuth session's grant:
// fixed for the session's life (a grant's client and scope never
// change; its revocation ends the session, which the revocation list
// refuses), so a busy token costs one read every cache.TTL.
type sessionGrant struct {
	ok                     bool // a live grant session
	clientID, scope, orgID string
}

// AccessTokenInfo is the introspection of access token raw: its
// information when it is live, nil when it is not. Live is what every
// route of this instance would judge: Authenticate's checks (signature,
// issuer, audience, expiry, the revocation list: its session, key,
// account, workspace and membership), a token that does not owe its
// second factor, and the tool APIs' standing check of its subject in its
// workspace (ToolAccess, cached). An OAuth grant's token also names its
// grant's client and scope (cached per session). Only a storage failure
// is an error; no database is read for a token seen in the last
// cache.TTL.
func (s *Service) AccessTokenInfo(ctx context.Context, raw string) (*TokenInfo, error) {
	p, c, err := s.authenticate(raw)
	if err != nil || p.Pending {
		return nil, nil
	}
	if err := s.ws.ToolAccess(ctx, p); err != nil {
		if gatehouse.ErrorKind(err) == gatehouse.KindInternal {
			return nil, err
		}
		return nil, nil
	}
	info := &TokenInfo{Kind: TokenAccess, Subject: p.UserID, Audience: c.Audience, Issuer: c.Issuer, OrgID: p.OrgID,
		IssuedAt: p.IssuedAt, ExpiresAt: p.ExpiresAt}
	if p.Via == gatehouse.ViaOAuth {
		g, err := s.sessionGrant(ctx, p.SessionID)
		if err != nil {
			return nil, err
		}
		if !g.ok || g.orgID != p.OrgID {
			return nil, nil
		}
		info.ClientID, info.Scope = g.clientID, g.scope
	}
	return info, nil
}

// sessionGrant reads (or remembers) the grant of OAuth session sid.
func (s *Service) sessionGrant(ctx context.Context, sid string) (sessionGrant, error) {
	now := s.Now()
	if g, ok := s.grantOf.Get(sid, now); ok {
		return g, nil
	}
	var g sessionGrant
	if gatehouse.IsID(sid) {
		sess, err := s.store.SessionByID(ctx, sid)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return g, internal("find session", err)
		}
		if err == nil && sess.Via == gatehouse.ViaOAuth && sess.GrantID != "" && sess.RevokedAt == nil {
			gr, err := s.store.GrantByID(ctx, sess.GrantID)
			if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				return g, internal("find grant", err)
			}
			if err == nil && gr.RevokedAt == nil {
				g = sessionGrant{ok: true, clientID: gr.ClientID, scope: gr.Scope, orgID: gr.OrgID}
			}
		}
	}
	s.grantOf.Put(sid, g, now)
	return g, nil
}

// RefreshTokenInfo is the introspection of refresh token raw by client
// clientID: its information when it is the live refresh token of an
// OAuth grant session whose grant was made to clientID and that the
// token endpoint would refresh now (unexpired, not rotated, its session
// not revoked and within its absolute lifetime, its user still a member
// of the grant's live workspace at the level it requires, its grant not
// revoked); nil otherwise: a sign-in session's token, another client's,
// an unknown or forged one. Only a storage failure is an error.
func (s *Service) RefreshTokenInfo(ctx context.Context, raw, clientID string) (*TokenInfo, error) {
	read, err := s.liveRefreshRead(ctx, raw)
	if read == nil || err != nil {
		return nil, err
	}
	now := s.Now()
	rt, sess, o := read.Token, read.Session, read.Org
	if !s.policy.Refreshable(sess, now) ||
		sess.Via != gatehouse.ViaOAuth || sess.GrantID == "" ||
		o == nil || o.DeletedAt != nil || read.Role == "" || o.Admits(sess.Level.Level(sess.Via)) != nil {
		return nil, nil
	}
	g, err := s.store.GrantByID(ctx, sess.GrantID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find grant", err)
	}
	if g.RevokedAt != nil || g.ClientID != clientID || g.OrgID != o.ID {
		return nil, nil
	}
	issued := rt.CreatedAt
	if issued.IsZero() {
		issued = sess.CreatedAt // the session's first token
	}
	exp := rt.ExpiresAt
	if end := s.policy.AbsoluteEnd(sess.CreatedAt); end.Before(exp) {
		exp = end
	}
	return &TokenInfo{Kind: TokenRefresh, Subject: sess.UserID, ClientID: g.ClientID, Scope: g.Scope, OrgID: g.OrgID,
		IssuedAt: issued, ExpiresAt: exp}, nil
}
