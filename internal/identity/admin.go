package identity

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse"
)

// ActorSystem is the audit actor of what an operator does from the
// command line (gatehouse sessions revoke): no person's account.
const ActorSystem = "system"

// errNoAccount answers an operator's command naming an unknown address.
var errNoAccount = gatehouse.Errorf(gatehouse.KindNotFound, "no account has that email address")

// Account returns the account of email, for an operator (gatehouse
// users show).
func (s *Service) Account(ctx context.Context, email string) (*gatehouse.User, error) {
	key, _, err := gatehouse.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	u, err := s.store.UserByEmail(ctx, key)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errNoAccount
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	return u, nil
}

// RevokeSessions ends every live session of the account of email (their
// refresh tokens stop at once; their access tokens on every instance
// within the revocation list's poll) and audits it with the actor
// "system" in the account's personal workspace: gatehouse sessions
// revoke --user.
func (s *Service) RevokeSessions(ctx context.Context, email string) (*gatehouse.User, error) {
	u, err := s.Account(ctx, email)
	if err != nil {
		return nil, err
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.RevokeUserSessions(ctx, u.ID, "", s.Now()); err != nil {
			return internal("revoke sessions", err)
		}
		o, err := tx.PersonalOrg(ctx, u.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return internal("find personal workspace", err)
		}
		if err := s.ws.Audit(ctx, tx, o.ID, ActorSystem, "user.sessions_revoked", "user", u.ID, map[string]any{"via": "cli"}); err != nil {
			return internal("audit", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
