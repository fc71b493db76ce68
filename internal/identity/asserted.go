package identity

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Asserted is a client's access that another party's identity assertion
// vouches for (an ID-JAG accepted at the token endpoint, internal/sso
// checks it): the member it names, in which workspace, for which client,
// resource and scope.
type Asserted struct {
	UserID   string
	OrgID    string
	ClientID string
	Resource string
	Scope    string
	// Detail joins the audit entry (the connection, the assertion's jti).
	Detail map[string]any
}

// OpenAsserted opens the access a checked assertion vouches for, in st's
// transaction: the one that spends the assertion, so the access and the
// spent assertion commit together (internal/oauth's JWT-bearer grant
// gives internal/sso one that calls StartAssertedSession).
type OpenAsserted func(st Store, a *Asserted) (*SignIn, error)

// ErrAssertedGone answers an assertion whose person is not (or no
// longer) a member of its workspace: the check made in the transaction
// that spends it, which internal/sso relies on.
var ErrAssertedGone = gatehouse.Errorf(gatehouse.KindForbidden, "the person is not a member of this workspace")

// StartAssertedSession opens the session of an asserted access and
// returns its access token only: no grant and no refresh token (the
// session ends when its access token does; a new token takes a new
// assertion from the identity provider, which decides again). The level
// is aal1, so a workspace requiring two-factor refuses it. Audited in the
// workspace as oauth.assertion_accepted. It runs in st's transaction (as
// StartProvenSession), the one that spends the assertion.
func (s *Service) StartAssertedSession(ctx context.Context, st Store, in Asserted, meta gatehouse.SessionMeta) (*SignIn, error) {
	var out *SignIn
	err := st.Tx(ctx, func(tx Store) error {
		u, err := tx.PinUser(ctx, in.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errProvenGone
		}
		if err != nil {
			return internal("find user", err)
		}
		o, m, err := workspace.LiveMember(ctx, tx, in.OrgID, u.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return ErrAssertedGone
		}
		if err != nil {
			return internal("asserted org", err)
		}
		lvl := gatehouse.Assurance{AAL: gatehouse.AAL1}.Level(gatehouse.ViaOAuth)
		if err := o.Admits(lvl); err != nil {
			return err
		}
		oc, err := s.ws.OrgContext(ctx, tx, o, m.Role)
		if err != nil {
			return internal("org context", err)
		}
		now := s.Now()
		sess := &Session{ID: gatehouse.NewID(), UserID: u.ID, Via: gatehouse.ViaOAuth, OrgID: o.ID, UserAgent: truncate(meta.UserAgent, 512),
			IP: meta.IP, CreatedAt: now, ExpiresAt: now.Add(AccessTTL), LastUsedAt: now, Level: lvl}
		b := binding{scope: in.Scope}
		if in.Resource != "" {
			b.resources = []string{in.Resource}
		}
		if out, err = s.storeSession(ctx, tx, u, oc, sess, b); err != nil {
			return err
		}
		out.RefreshToken, out.Scope = "", in.Scope
		detail := map[string]any{"client_id": in.ClientID, "resource": in.Resource, "scope": in.Scope}
		for k, v := range in.Detail {
			detail[k] = v
		}
		return s.ws.Audit(ctx, tx, o.ID, u.ID, "oauth.assertion_accepted", "session", sess.ID, detail)
	})
	return out, err
}

// errSubjectGone refuses a subject token whose person or session is gone.
var errSubjectGone = gatehouse.Errorf(gatehouse.KindUnauthorized, "the subject token's account or session is no longer active")

// AssertionSubject checks the subject of an ID token this service issued,
// before an identity assertion is issued for it (RFC 8693 token
// exchange): the account exists and is not disabled, and the session the
// token names is live and the account's. It returns the account and the
// session's workspace.
func (s *Service) AssertionSubject(ctx context.Context, userID, sessionID string) (*gatehouse.User, string, error) {
	u, err := s.store.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, "", errSubjectGone
	}
	if err != nil {
		return nil, "", internal("find user", err)
	}
	if u.DisabledAt != nil {
		return nil, "", errSubjectGone
	}
	sess, err := ownSession(ctx, s.store, &gatehouse.Principal{UserID: userID, SessionID: sessionID}, s.Now())
	if err != nil {
		return nil, "", errSubjectGone
	}
	return u, sess.OrgID, nil
}
