package identity

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Proven is a person whom another party proved: a workspace's identity
// provider (internal/sso). Identity opens their session; the caller owns
// the rules of that party (which address, which account).
type Proven struct {
	// UserID is the account signing in; "" creates one for Email, whose
	// address the other party vouches for (verified, no password).
	UserID string
	Email  string
	Name   string
	// OrgID is the workspace the session is scoped to; it must be one
	// the person is a member of once Before has run.
	OrgID string
	// Before runs in the transaction once the account is known (created
	// is true when it was made here), before the session opens: the
	// caller's membership and link writes commit with the session or
	// not at all.
	Before func(tx Store, u *gatehouse.User, created bool) error
	// Detail joins the sign-in's audit entry (the connection's id).
	Detail map[string]any
}

// errProvenGone answers a sign-in whose account was deleted meanwhile.
var errProvenGone = gatehouse.Errorf(gatehouse.KindUnauthorized, "this account no longer exists")

// StartProvenSession opens a sign-in session for a person proven
// elsewhere, as StartGrantSession does for a grant: in st's transaction,
// scoped to in.OrgID, audited as a sign-in by MethodSSO. An account with
// a second factor owes it (SignIn.Factors), as after a password.
func (s *Service) StartProvenSession(ctx context.Context, st Store, in Proven, meta gatehouse.SessionMeta) (*SignIn, error) {
	var out *SignIn
	err := st.Tx(ctx, func(tx Store) error {
		u, created, err := s.provenUser(ctx, tx, in)
		if err != nil {
			return err
		}
		if in.Before != nil {
			if err := in.Before(tx, u, created); err != nil {
				return err
			}
		}
		o, m, err := workspace.LiveMember(ctx, tx, in.OrgID, u.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindForbidden, "you are not a member of this workspace")
		}
		if err != nil {
			return internal("proven org", err)
		}
		oc, err := s.ws.OrgContext(ctx, tx, o, m.Role)
		if err != nil {
			return internal("org context", err)
		}
		if out, err = s.startSession(ctx, tx, u, oc, gatehouse.ViaSSO, meta); err != nil {
			return err
		}
		sid, _ := splitRefresh(out.RefreshToken)
		detail := map[string]any{"method": MethodSSO, "session_id": sid}
		for k, v := range in.Detail {
			detail[k] = v
		}
		return s.auditPersonal(ctx, tx, u.ID, "", "user.signed_in", detail)
	})
	if out != nil {
		s.users.Drop(out.User.ID)
	}
	return out, err
}

// provenUser is in's account: read and pinned, or created with its
// address verified and its personal workspace.
func (s *Service) provenUser(ctx context.Context, tx Store, in Proven) (*gatehouse.User, bool, error) {
	if in.UserID != "" {
		u, err := tx.PinUser(ctx, in.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, false, errProvenGone
		}
		if err != nil {
			return nil, false, internal("find user", err)
		}
		return u, false, nil
	}
	key, email, err := gatehouse.ParseEmail(in.Email)
	if err != nil {
		return nil, false, err
	}
	name := truncate(strings.TrimSpace(in.Name), 4*workspace.MaxName)
	if name == "" || gatehouse.CheckOneLine("name", name) != nil || len([]rune(name)) > workspace.MaxName {
		name = email[:strings.IndexByte(email, '@')]
	}
	now := s.Now()
	u := &gatehouse.User{ID: gatehouse.NewID(), Email: email, EmailKey: key, Name: name, EmailVerified: true, CreatedAt: now, UpdatedAt: now}
	if err := tx.CreateUser(ctx, u); errors.Is(err, gatehouse.ErrConflict) {
		return nil, false, gatehouse.Errorf(gatehouse.KindConflict, "an account with this address was created meanwhile; sign in again")
	} else if err != nil {
		return nil, false, internal("create user", err)
	}
	oc, err := s.ws.HomeOrg(ctx, tx, u)
	if err != nil {
		return nil, false, err
	}
	if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.registered", "user", u.ID, map[string]any{"via": gatehouse.ViaSSO}); err != nil {
		return nil, false, internal("audit", err)
	}
	return u, true, nil
}

// allowSignIn asks the SSO gate whether method may sign in to the
// account (userID, "" for none) of emailKey.
func (s *Service) allowSignIn(ctx context.Context, method, userID, emailKey string) error {
	if s.gate == nil {
		return nil
	}
	return s.gate.AllowSignIn(ctx, method, userID, emailKey)
}
