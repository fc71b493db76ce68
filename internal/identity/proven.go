package identity

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Proven is a person whom another party proved: a workspace's identity
// provider or one of the instance's upstream providers (internal/sso).
// Identity opens their session; the caller owns the rules of that party
// (which address, which account).
type Proven struct {
	// UserID is the account signing in; "" creates one for Email, whose
	// address the other party vouches for (verified, no password) unless
	// Unverified.
	UserID string
	Email  string
	Name   string
	// Unverified creates the account with its address unconfirmed: the
	// other party did not assert it.
	Unverified bool
	// Via is how the session was obtained: gatehouse.ViaSSO ("" too) or
	// gatehouse.ViaSocial.
	Via string
	// OrgID is the workspace the session is scoped to; it must be one
	// the person is a member of once Before has run. "": the person's
	// home workspace (the default one, else the personal one).
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
// scoped to in.OrgID, audited as a sign-in by MethodSSO (MethodSocial for
// ViaSocial). An account with a second factor owes it (SignIn.Factors),
// as after a password.
func (s *Service) StartProvenSession(ctx context.Context, st Store, in Proven, meta gatehouse.SessionMeta) (*SignIn, error) {
	var out *SignIn
	if in.Via != gatehouse.ViaSocial {
		in.Via = gatehouse.ViaSSO
	}
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
		oc, err := s.provenOrg(ctx, tx, in.OrgID, u)
		if err != nil {
			return err
		}
		if out, err = s.startSession(ctx, tx, u, oc, in.Via, meta); err != nil {
			return err
		}
		sid, _ := splitRefresh(out.RefreshToken)
		detail := signInMeta(in.Via, sid, meta)
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

// provenOrg is the workspace a proven sign-in is scoped to: orgID, of
// which u must be a member, or u's home workspace when it is "".
func (s *Service) provenOrg(ctx context.Context, tx Store, orgID string, u *gatehouse.User) (*workspace.OrgContext, error) {
	if orgID == "" {
		return s.ws.HomeOrg(ctx, tx, u)
	}
	o, m, err := workspace.LiveMember(ctx, tx, orgID, u.ID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "you are not a member of this workspace")
	}
	if err != nil {
		return nil, internal("proven org", err)
	}
	oc, err := s.ws.OrgContext(ctx, tx, o, m.Role)
	if err != nil {
		return nil, internal("org context", err)
	}
	return oc, nil
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
	u := &gatehouse.User{ID: gatehouse.NewID(), Email: email, EmailKey: key, Name: name, EmailVerified: !in.Unverified, CreatedAt: now, UpdatedAt: now}
	if err := tx.CreateUser(ctx, u); errors.Is(err, gatehouse.ErrConflict) {
		return nil, false, gatehouse.Errorf(gatehouse.KindConflict, "an account with this address was created meanwhile; sign in again")
	} else if err != nil {
		return nil, false, internal("create user", err)
	}
	oc, err := s.ws.HomeOrg(ctx, tx, u)
	if err != nil {
		return nil, false, err
	}
	if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.registered", "user", u.ID, map[string]any{"via": in.Via}); err != nil {
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
