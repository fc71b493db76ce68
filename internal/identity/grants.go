package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The OAuth side of the domain: grants (a user's consent for a client to act
// in one workspace), the sessions issued under them, and the browser session
// of the hosted pages. Protocol rules (PKCE, codes, redirect URIs) live in
// internal/oauth; what a grant may do and who may make one lives here.

// GrantInput is a user's approval of a client for one workspace.
type GrantInput struct {
	UserID     string
	ClientID   string
	ClientName string
	OrgID      string
	Scope      string
	Resource   string // RFC 8707 resource; joins the audience of its tokens
	// Level is the approving session's: the grant records it, its tokens
	// carry it, and a workspace requiring more refuses the approval.
	Level gatehouse.Assurance
	// SessionID is the approving browser session (Grant.SessionID).
	SessionID string
}

// CreateGrant records the user's consent for a client to act in one
// workspace the user belongs to; it is listed in GET /v1/me/grants.
func (s *Service) CreateGrant(ctx context.Context, in GrantInput) (*Grant, error) {
	if in.OrgID == "" {
		return nil, gatehouse.Invalid("choose a workspace")
	}
	g := &Grant{ID: gatehouse.NewID(), UserID: in.UserID, ClientID: in.ClientID, ClientName: truncate(in.ClientName, workspace.MaxName),
		OrgID: in.OrgID, Scope: in.Scope, Resource: in.Resource, CreatedAt: s.Now(), AAL: in.Level.Level(gatehouse.ViaOAuth).AAL, SessionID: in.SessionID}
	err := s.store.Tx(ctx, func(tx Store) error {
		o, _, err := workspace.LiveMember(ctx, tx, in.OrgID, in.UserID)
		if err != nil {
			if errors.Is(err, gatehouse.ErrNotFound) {
				return gatehouse.Errorf(gatehouse.KindForbidden, "you are not a member of this workspace")
			}
			return internal("grant org", err)
		}
		if in.Level.Pending {
			return gatehouse.ErrSecondFactor
		}
		if err := o.Admits(in.Level); err != nil {
			return err
		}
		if err := tx.CreateGrant(ctx, g); err != nil {
			return internal("create grant", err)
		}
		return s.ws.Audit(ctx, tx, g.OrgID, g.UserID, "grant.created", "grant", g.ID,
			map[string]any{"client_id": g.ClientID, "client_name": g.ClientName})
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

var errGrantGone = gatehouse.Errorf(gatehouse.KindUnauthorized, "the grant was revoked or its workspace access is gone")

// StartGrantSession opens the session of a live grant and returns its first
// access and refresh tokens: via oauth, scoped to the granted workspace and
// its enabled tools, with the grant's resource in the audience.
//
// It runs in st's transaction: the authorization server passes the
// identity store of the transaction in which it spends its single-use
// code, so that of concurrent exchanges exactly one opens a session and
// the others see the code used only once that session exists.
func (s *Service) StartGrantSession(ctx context.Context, st Store, grantID string, meta gatehouse.SessionMeta) (*SignIn, error) {
	var out *SignIn
	err := st.Tx(ctx, func(tx Store) error {
		g, err := tx.GrantByID(ctx, grantID)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && g.RevokedAt != nil) {
			return errGrantGone
		}
		if err != nil {
			return internal("find grant", err)
		}
		u, err := tx.UserByID(ctx, g.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errGrantGone
		}
		if err != nil {
			return internal("find user", err)
		}
		o, m, err := workspace.LiveMember(ctx, tx, g.OrgID, g.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errGrantGone
		}
		if err != nil {
			return internal("grant org", err)
		}
		lvl := grantLevel(g)
		if err := o.Admits(lvl); err != nil {
			return err // the workspace began requiring two-factor since the approval
		}
		oc, err := s.ws.OrgContext(ctx, tx, o, m.Role)
		if err != nil {
			return internal("org context", err)
		}
		now := s.Now()
		sess := &Session{ID: gatehouse.NewID(), UserID: u.ID, Via: gatehouse.ViaOAuth, GrantID: g.ID, OrgID: g.OrgID,
			UserAgent: truncate(meta.UserAgent, 512), IP: meta.IP, CreatedAt: now, ExpiresAt: s.policy.End(now, now), LastUsedAt: now, Level: lvl}
		out, err = s.storeSession(ctx, tx, u, oc, sess, bindingOf(g))
		if out != nil {
			out.Scope = g.Scope
		}
		return err
	})
	return out, err
}

// grantLevel is the level of a grant's tokens: its approving session's.
func grantLevel(g *Grant) gatehouse.Assurance {
	return gatehouse.Assurance{AAL: g.AAL}.Level(gatehouse.ViaOAuth)
}

// bindingOf is what g binds its tokens to: its resource (RFC 8707) and
// its scope.
func bindingOf(g *Grant) binding {
	b := binding{scope: strings.Join(gatehouse.Scopes(g.Scope), " ")}
	if g.Resource != "" {
		b.resources = []string{g.Resource}
	}
	return b
}

// grantBinding checks that an OAuth session's grant is live and returns
// what it binds its tokens to.
func grantBinding(ctx context.Context, st Store, sess *Session) (binding, error) {
	if sess.GrantID == "" {
		return binding{}, nil
	}
	g, err := st.GrantByID(ctx, sess.GrantID)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && g.RevokedAt != nil) {
		return binding{}, errBadRefresh
	}
	if err != nil {
		return binding{}, internal("find grant", err)
	}
	return bindingOf(g), nil
}

// ErrGrantMismatch is the kind of error RefreshGrant answers when the
// refresh token belongs to another client or another resource.
var ErrGrantMismatch = gatehouse.Errorf(gatehouse.KindUnauthorized, "the refresh token was not issued to this client")

// ErrResourceMismatch is RefreshGrant's answer when the resource asked for
// is not the one the grant was made for (RFC 8707 invalid_target).
var ErrResourceMismatch = gatehouse.Errorf(gatehouse.KindInvalid, "the resource differs from the one the grant was made for")

// ErrScopeWidened is RefreshGrant's answer when the scope asked for holds
// a scope the grant does not (RFC 6749 §6: a refresh may narrow the scope,
// never widen it; invalid_scope).
var ErrScopeWidened = gatehouse.Errorf(gatehouse.KindInvalid, "the scope asks for more than the grant was made for")

// RefreshGrant rotates the refresh token of an OAuth session (reuse
// detection as in Refresh). The token must have been issued under a grant to
// clientID; resource, when given, must be the grant's; scope, when given,
// narrows the new access token's scope and must be within the grant's (the
// grant, and so the next refresh, keeps its own).
func (s *Service) RefreshGrant(ctx context.Context, secret, clientID, resource, scope string) (*SignIn, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("refresh_token is required")
	}
	narrow := strings.Join(gatehouse.Scopes(scope), " ")
	return s.refresh(ctx, secret, nil, narrow, func(tx Store, sess *Session) error {
		if sess.Via != gatehouse.ViaOAuth || sess.GrantID == "" {
			return ErrGrantMismatch
		}
		g, err := tx.GrantByID(ctx, sess.GrantID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errBadRefresh
		}
		if err != nil {
			return internal("find grant", err)
		}
		if g.ClientID != clientID {
			return ErrGrantMismatch
		}
		if resource != "" && resource != g.Resource {
			return ErrResourceMismatch
		}
		granted := gatehouse.Scopes(g.Scope)
		for _, w := range gatehouse.Scopes(narrow) {
			if !slices.Contains(granted, w) {
				return ErrScopeWidened
			}
		}
		return nil
	})
}

// RevokeGrantNow revokes a grant and its sessions without a caller: the
// authorization server does it when a code is presented a second time.
func (s *Service) RevokeGrantNow(ctx context.Context, grantID, reason string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		g, err := tx.GrantByID(ctx, grantID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return internal("find grant", err)
		}
		if g.RevokedAt != nil {
			return nil
		}
		if err := tx.RevokeGrant(ctx, g.UserID, g.ID, s.Now()); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("revoke grant", err)
		}
		s.log.Warn("oauth grant revoked", "grant_id", g.ID, "client_id", g.ClientID, "reason", reason)
		return s.ws.Audit(ctx, tx, g.OrgID, g.UserID, "grant.revoked", "grant", g.ID, map[string]any{"reason": reason})
	})
}

// BrowserSession is the signed-in user of the hosted web pages.
type BrowserSession struct {
	User      *gatehouse.User
	SessionID string
	ExpiresAt time.Time
	Level     gatehouse.Assurance // the session's, never pending
	// Via is how the session was signed in (password, passkey, magic
	// link, SSO, social), as a bearer token of it would say.
	Via string
	// AuthTime is when the person last authenticated: the session's
	// sign-in (every credential presented opens a new session). ID tokens
	// carry it (auth_time) and max_age is measured against it.
	AuthTime time.Time
}

// BrowserUser resolves the secret of a hosted-page session cookie: the
// refresh token of a sign-in session, looked up without rotating it. A
// rotated, expired or revoked token, an OAuth session's, or a session that
// still owes its second factor (so no consent or grant is ever given
// below it) gives KindUnauthorized.
func (s *Service) BrowserUser(ctx context.Context, secret string) (*BrowserSession, error) {
	if secret == "" {
		return nil, workspace.ErrUnauthorized
	}
	// One round trip: the token with its session and user (BrowserRead),
	// checked here on every page view, so a revoked session is refused at once.
	now := s.Now()
	sid, hash, err := s.refreshOwner(ctx, secret)
	if err == nil {
		var rd *RefreshRead
		if rd, err = s.store.BrowserRead(ctx, sid, hash); err == nil {
			return s.browserSession(rd, now)
		}
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, workspace.ErrUnauthorized
	}
	return nil, internal("find refresh token", err)
}

// browserSession is the signed-in browser of rd, a live refresh token's
// read, when its session may act now.
func (s *Service) browserSession(rd *RefreshRead, now time.Time) (*BrowserSession, error) {
	rt, sess, u := rd.Token, rd.Session, rd.User
	if !rt.ExpiresAt.After(now) ||
		sess.RevokedAt != nil || !sess.ExpiresAt.After(now) || sess.Via == gatehouse.ViaOAuth || sess.Level.Pending {
		return nil, workspace.ErrUnauthorized
	}
	return &BrowserSession{User: u, SessionID: sess.ID, ExpiresAt: rt.ExpiresAt, Level: sess.Level.Level(sess.Via), Via: sess.Via,
		AuthTime: sess.CreatedAt}, nil
}

// BrowserPrincipal is the principal a hosted page acts as for a signed-in
// user: a full session scoped to the user's home workspace.
func (s *Service) BrowserPrincipal(ctx context.Context, b *BrowserSession) (*gatehouse.Principal, error) {
	var p *gatehouse.Principal
	err := s.store.Tx(ctx, func(tx Store) error {
		oc, err := s.ws.HomeOrg(ctx, tx, b.User)
		if err != nil {
			return err
		}
		p = &gatehouse.Principal{UserID: b.User.ID, SessionID: b.SessionID, OrgID: oc.ID, Role: oc.Role, Tools: oc.Tools, Via: b.Via,
			Assurance: b.Level}
		return nil
	})
	return p, err
}

// RevokeGrantToken is OAuth token revocation (RFC 7009) for client
// clientID: raw is a refresh or access token of an OAuth grant session
// issued to that client, and its session ends (revoked on every instance
// through the revocation list; the grant itself stays). hint
// ("access_token" or "refresh_token") only says which kind to try first.
// Anything else (an unknown, malformed, expired, rotated or forged token,
// another client's, a sign-in session's) revokes nothing and is no error:
// the endpoint answers the same for every token, so it tells a prober
// nothing. Only storage failures are returned.
func (s *Service) RevokeGrantToken(ctx context.Context, raw, hint, clientID string) error {
	kinds := []func(context.Context, string) (*Session, error){s.grantSessionOfRefresh, s.grantSessionOfAccess}
	if hint == "access_token" {
		kinds[0], kinds[1] = kinds[1], kinds[0]
	}
	for _, find := range kinds {
		sess, err := find(ctx, raw)
		if err != nil {
			return err
		}
		if sess != nil {
			return s.revokeGrantSession(ctx, sess, clientID)
		}
	}
	return nil
}

// grantSessionOfRefresh is the session whose live refresh token is
// secret; nil when there is none.
func (s *Service) grantSessionOfRefresh(ctx context.Context, secret string) (*Session, error) {
	read, err := s.liveRefreshRead(ctx, secret)
	if read == nil || err != nil {
		return nil, err
	}
	return read.Session, nil
}

// liveRefreshRead reads refresh token secret with its session when it is the
// session's live token (not rotated, not expired); nil when there is
// none. The token must hash to the session's own token: a forged
// "<session id>.<anything>" finds nothing. Only a storage failure is an
// error.
func (s *Service) liveRefreshRead(ctx context.Context, secret string) (*RefreshRead, error) {
	sid, hash, err := s.refreshOwner(ctx, secret)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find refresh token", err)
	}
	read, err := s.store.RefreshSession(ctx, sid, hash)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find refresh token", err)
	}
	if read.Token.RotatedAt != nil || !s.Now().Before(read.Token.ExpiresAt) {
		return nil, nil
	}
	return read, nil
}

// grantSessionOfAccess is the session named by a valid, unexpired access
// token (signature, issuer, audience checked; not an API key's token); nil
// when there is none.
func (s *Service) grantSessionOfAccess(ctx context.Context, raw string) (*Session, error) {
	c, err := s.verify(ctx, raw)
	if err != nil || c.SessionID == "" || c.KeyID != "" || !gatehouse.IsID(c.SessionID) {
		return nil, nil
	}
	sess, err := s.store.SessionByID(ctx, c.SessionID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find session", err)
	}
	if sess.UserID != c.Subject {
		return nil, nil
	}
	return sess, nil
}

// revokeGrantSession ends sess when it is a live OAuth grant session whose
// grant was made to clientID; any other session is left alone.
func (s *Service) revokeGrantSession(ctx context.Context, sess *Session, clientID string) error {
	if sess.Via != gatehouse.ViaOAuth || sess.GrantID == "" || sess.RevokedAt != nil {
		return nil
	}
	return s.store.Tx(ctx, func(tx Store) error {
		g, err := tx.GrantByID(ctx, sess.GrantID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return internal("find grant", err)
		}
		if g.ClientID != clientID {
			return nil // RFC 7009 §2.1: only the client it was issued to
		}
		ok, err := tx.RevokeSession(ctx, sess.ID, s.Now())
		if err != nil {
			return internal("revoke session", err)
		}
		if !ok {
			return nil
		}
		return s.ws.Audit(ctx, tx, g.OrgID, g.UserID, "session.revoked", "session", sess.ID,
			map[string]any{"client_id": g.ClientID, "reason": "revoked by the client (RFC 7009)"})
	})
}
