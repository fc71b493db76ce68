package sso

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// Linked is an upstream identity linked to an account: a subject at a
// social provider (Kind "social", Provider its name), or the links to one
// workspace connection (Kind "sso", ID and Provider the connection's id
// and name).
type Linked struct {
	ID        string
	Kind      string
	Provider  string
	Subject   string
	UserID    string
	Email     string
	CreatedAt time.Time
}

// The kinds of linked identity.
const (
	KindSocial = "social"
	KindSSO    = "sso"
)

// Identities is the part of Store that keeps linked identities.
type Identities interface {
	// SocialUser is the account linked to subject at provider; ErrNotFound.
	SocialUser(ctx context.Context, provider, subject string) (string, error)
	// LinkSocial stores l; ErrConflict when its subject is linked already.
	LinkSocial(ctx context.Context, l *Linked) error
	// UserIdentities lists the identities linked to userID, oldest first.
	UserIdentities(ctx context.Context, userID string) ([]Linked, error)
	// Unlink removes userID's identity id; ErrNotFound when userID has
	// none of that id.
	Unlink(ctx context.Context, userID, id string) error
}

// LinkedIdentity is a linked identity as the person sees it.
type LinkedIdentity struct {
	Linked
	// Label names the provider: a social provider's label, or the
	// workspace connection's name.
	Label string
}

var (
	errIdentityNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "identity not found")
	errLastSignIn       = gatehouse.Errorf(gatehouse.KindConflict,
		"this is the last way you can sign in: set a password or add a passkey before unlinking it")
)

// Identities lists the caller's linked identities.
func (s *Service) Identities(ctx context.Context, p *gatehouse.Principal) ([]LinkedIdentity, error) {
	ls, err := s.store.UserIdentities(ctx, p.UserID)
	if err != nil {
		return nil, gatehouse.Internal("list identities", err)
	}
	out := make([]LinkedIdentity, len(ls))
	for i, l := range ls {
		out[i] = LinkedIdentity{Linked: l, Label: l.Provider}
		if c, ok := s.social[socialPrefix+l.Provider]; ok && l.Kind == KindSocial {
			out[i].Label = c.Name
		}
	}
	return out, nil
}

// Unlink removes the caller's identity id, after a recent sign-in. An
// account with no password and no passkey keeps its last identity: it
// would have no way to sign in but emailed links.
func (s *Service) Unlink(ctx context.Context, p *gatehouse.Principal, id string) error {
	if !gatehouse.IsID(id) {
		return errIdentityNotFound
	}
	if err := s.id.RequireRecentAuth(ctx, p, "unlink a sign-in method"); err != nil {
		return err
	}
	return s.store.Tx(ctx, func(tx Store) error {
		itx := tx.Identity()
		// The row lock serializes two unlinks racing for the last one.
		if err := itx.LockUser(ctx, p.UserID); err != nil {
			return gatehouse.Internal("lock user", err)
		}
		u, err := itx.PinUser(ctx, p.UserID)
		if err != nil {
			return gatehouse.Internal("find user", err)
		}
		ls, err := tx.UserIdentities(ctx, p.UserID)
		if err != nil {
			return gatehouse.Internal("list identities", err)
		}
		i := slices.IndexFunc(ls, func(l Linked) bool { return l.ID == id })
		if i < 0 {
			return errIdentityNotFound
		}
		if u.PasswordHash == "" && len(ls) == 1 {
			pks, err := itx.ListPasskeys(ctx, p.UserID)
			if err != nil {
				return gatehouse.Internal("list passkeys", err)
			}
			if len(pks) == 0 {
				return errLastSignIn
			}
		}
		if err := tx.Unlink(ctx, p.UserID, id); errors.Is(err, gatehouse.ErrNotFound) {
			return errIdentityNotFound
		} else if err != nil {
			return gatehouse.Internal("unlink identity", err)
		}
		return s.auditUser(ctx, tx, u, "user.identity_unlinked", map[string]any{"type": ls[i].Kind,
			"provider": strings.TrimPrefix(ls[i].Provider, socialPrefix)})
	})
}
