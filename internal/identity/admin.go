package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
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

// DeleteAccountAsOperator deletes the account of email as DeleteAccount
// does, under the same rule (refused while it is the only owner of a
// team with other members), audited with the actor "system": gatehouse
// users delete.
func (s *Service) DeleteAccountAsOperator(ctx context.Context, email string) (*gatehouse.User, error) {
	u, err := s.Account(ctx, email)
	if err != nil {
		return nil, err
	}
	return u, s.deleteAccount(ctx, u.ID, ActorSystem)
}

// CreateAccount creates an account without a password, with its personal
// workspace, for an operator (gatehouse users create): its owner signs in
// with an emailed sign-in link or sets a password through recovery.
// verified marks the address confirmed, for an operator who knows it is
// the person's; otherwise the owner confirms it by signing in by link.
// Audited with the actor "system". No session is opened, no mail sent.
func (s *Service) CreateAccount(ctx context.Context, email, name string, verified bool) (*gatehouse.User, error) {
	key, email, err := gatehouse.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return nil, err
	}
	if len([]rune(name)) > workspace.MaxName {
		return nil, gatehouse.InvalidField("name", "name must be at most %d characters", workspace.MaxName)
	}
	if name == "" {
		name = email[:strings.IndexByte(email, '@')]
	}
	now := s.Now()
	u := &gatehouse.User{ID: gatehouse.NewID(), Email: email, EmailKey: key, Name: name, EmailVerified: verified, CreatedAt: now, UpdatedAt: now}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.CreateUser(ctx, u); err != nil {
			if errors.Is(err, gatehouse.ErrConflict) {
				return gatehouse.Errorf(gatehouse.KindConflict, "an account with this email already exists")
			}
			return internal("create user", err)
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		if err := s.ws.Audit(ctx, tx, oc.ID, ActorSystem, "user.registered", "user", u.ID, map[string]any{"via": "cli", "verified": verified}); err != nil {
			return internal("audit", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// DisableAccount disables the account of email, for an operator
// (gatehouse users disable): in one transaction it sets disabled_at and
// ends every session of the account, sign-in and OAuth grant sessions
// alike, and the tokens its keys were exchanged for (revocation rows:
// every instance refuses their tokens within a poll). From then every sign-in is refused (storeSession; a password as
// a wrong one) and so is the exchange of the account's personal keys and
// of the org keys it created. Audited with the actor "system".
func (s *Service) DisableAccount(ctx context.Context, email string) (*gatehouse.User, error) {
	return s.setDisabled(ctx, email, true)
}

// EnableAccount lifts DisableAccount (gatehouse users enable); the
// sessions it ended stay ended.
func (s *Service) EnableAccount(ctx context.Context, email string) (*gatehouse.User, error) {
	return s.setDisabled(ctx, email, false)
}

func (s *Service) setDisabled(ctx context.Context, email string, disable bool) (*gatehouse.User, error) {
	u, err := s.Account(ctx, email)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	var at *time.Time
	action := "user.enabled"
	if disable {
		at, action = &now, "user.disabled"
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.SetUserDisabled(ctx, u.ID, at); err != nil {
			return internal("set disabled", err)
		}
		if disable {
			if err := tx.RevokeUserSessions(ctx, u.ID, "", now); err != nil {
				return internal("revoke sessions", err)
			}
			if err := tx.RevokeTokensIssuedBefore(ctx, u.ID, now); err != nil {
				return internal("revoke key tokens", err)
			}
		}
		o, err := tx.PersonalOrg(ctx, u.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return internal("find personal workspace", err)
		}
		if err := s.ws.Audit(ctx, tx, o.ID, ActorSystem, action, "user", u.ID, map[string]any{"via": "cli"}); err != nil {
			return internal("audit", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	u.DisabledAt = at
	return u, nil
}

// keyOwnerEnabled refuses, as a bad key, a key of a disabled account: a
// personal key of it or an org key it created.
func (s *Service) keyOwnerEnabled(ctx context.Context, k *workspace.APIKey) error {
	owner := k.UserID
	if owner == "" {
		owner = k.CreatedBy
	}
	if owner == "" {
		return nil
	}
	u, err := s.store.UserByID(ctx, owner)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil // an org key outlives its creator's account
	}
	if err != nil {
		return internal("find key owner", err)
	}
	if u.DisabledAt != nil {
		return workspace.ErrBadKey
	}
	return nil
}
