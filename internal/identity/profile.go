package identity

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// ProfilePatch is the body of PATCH /v1/me; nil fields are left alone.
type ProfilePatch struct {
	Name      *string
	AvatarURL *string
	// Language is the pages' and mail's language: a code of i18n.Codes,
	// or "" to follow the browser's (the request's) Accept-Language.
	Language *string
}

// UpdateProfile applies a partial profile change. API-key sessions may call it.
func (s *Service) UpdateProfile(ctx context.Context, p *gatehouse.Principal, in ProfilePatch) (*gatehouse.User, error) {
	if in.Name == nil && in.AvatarURL == nil && in.Language == nil {
		return nil, gatehouse.Invalid("nothing to update: give name, avatar_url or language")
	}
	var u *gatehouse.User
	err := s.store.Tx(ctx, func(tx Store) error {
		var err error
		u, err = workspace.Caller(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		before := map[string]any{}
		after := map[string]any{}
		if in.Name != nil {
			name := strings.TrimSpace(*in.Name)
			if name == "" {
				return gatehouse.InvalidField("name", "name must not be empty")
			}
			if err := gatehouse.CheckOneLine("name", name); err != nil {
				return err
			}
			if len([]rune(name)) > workspace.MaxName {
				return gatehouse.InvalidField("name", "name must be at most %d characters", workspace.MaxName)
			}
			before["name"], after["name"], u.Name = u.Name, name, name
		}
		if in.AvatarURL != nil {
			av := strings.TrimSpace(*in.AvatarURL)
			if err := checkAvatarURL(av); err != nil {
				return err
			}
			before["avatar_url"], after["avatar_url"], u.AvatarURL = u.AvatarURL, av, av
		}
		if in.Language != nil {
			if !i18n.Known(*in.Language) {
				return gatehouse.InvalidField("language", "language must be one of: %s", strings.Join(i18n.Codes(), ", "))
			}
			before["language"], after["language"], u.Language = u.Language, *in.Language, *in.Language
		}
		u.UpdatedAt = s.Now()
		if err := tx.UpdateUser(ctx, u); err != nil {
			return internal("update user", err)
		}
		return s.ws.Audit(ctx, tx, p.OrgID, p.UserID, "user.updated", "user", u.ID, map[string]any{"before": before, "after": after})
	})
	s.users.Drop(p.UserID)
	return u, err
}

func checkAvatarURL(raw string) error {
	if raw == "" {
		return gatehouse.InvalidField("avatar_url", "avatar_url must not be empty")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(raw) > 2048 {
		return gatehouse.InvalidField("avatar_url", "avatar_url must be an absolute http(s) URL")
	}
	return nil
}

// DeleteAccount removes the caller's account. It refuses while the caller
// is the sole owner of a team org that still has other members; team orgs
// where the caller is alone, and the personal org, are soft-deleted.
func (s *Service) DeleteAccount(ctx context.Context, p *gatehouse.Principal) error {
	if err := s.RequireRecentAuth(ctx, p, "delete your account"); err != nil {
		return err
	}
	return s.deleteAccount(ctx, p.UserID, p.UserID)
}

// deleteAccount is DeleteAccount's work on userID's account, audited with
// actor: the account itself, or ActorSystem (DeleteAccountAsOperator).
func (s *Service) deleteAccount(ctx context.Context, userID, actor string) error {
	defer s.users.Drop(userID)
	defer s.ws.ForgetStandings() // every org the account was in
	return s.store.Tx(ctx, func(tx Store) error {
		u, err := workspace.Caller(ctx, tx, userID)
		if err != nil {
			return err
		}
		orgs, err := tx.UserOrgs(ctx, u.ID)
		if err != nil {
			return internal("list orgs", err)
		}
		// Lock in id order so two deletions sharing orgs cannot deadlock.
		sort.Slice(orgs, func(i, j int) bool { return orgs[i].ID < orgs[j].ID })
		var blocking []string
		var alone, others []workspace.OrgListing
		for _, o := range orgs {
			if o.Kind == workspace.OrgPersonal {
				alone = append(alone, o)
				continue
			}
			if err := tx.LockOrg(ctx, o.ID); err != nil {
				return internal("lock org", err)
			}
			members, owners, err := tx.OrgCounts(ctx, o.ID)
			if err != nil {
				return internal("count members", err)
			}
			switch {
			case members <= 1:
				alone = append(alone, o)
			case o.Role == workspace.RoleOwner && owners == 1:
				blocking = append(blocking, o.Name)
			default:
				others = append(others, o)
			}
		}
		if len(blocking) > 0 {
			sort.Strings(blocking)
			return gatehouse.Errorf(gatehouse.KindConflict, "you are the only owner of %s, which still %s other members: make someone else an owner or remove the members first",
				strings.Join(blocking, ", "), map[bool]string{true: "has", false: "have"}[len(blocking) == 1])
		}
		now := s.Now()
		for _, o := range alone {
			if err := tx.SoftDeleteOrg(ctx, o.ID, now); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				return internal("delete org", err)
			}
			if err := s.ws.Audit(ctx, tx, o.ID, actor, "user.deleted", "user", u.ID, nil); err != nil {
				return internal("audit", err)
			}
		}
		for _, o := range others {
			if err := s.ws.Audit(ctx, tx, o.ID, actor, "member.removed", "user", u.ID, map[string]any{"role": o.Role, "self": actor == u.ID, "reason": "account_deleted"}); err != nil {
				return internal("audit", err)
			}
		}
		if err := tx.DeleteUser(ctx, u.ID, now); err != nil {
			return internal("delete user", err)
		}
		return nil
	})
}

// PasswordChange is the owner's change of their password: the current
// one (when the account has one), the new one, and whether the account's
// personal API keys end too. By default they keep working: the owner who
// changes a password knows it, unlike a reset's, and says whether a key
// may have leaked with it (the console asks).
type PasswordChange struct {
	Current    string
	New        string
	RevokeKeys bool
}

// changePassword is ChangePassword without the lockout.
func (s *Service) changePassword(ctx context.Context, p *gatehouse.Principal, ch PasswordChange) error {
	current, next := ch.Current, ch.New
	if err := checkPassword("new_password", next); err != nil {
		return err
	}
	if err := s.RequireRecentAuth(ctx, p, "change your password"); err != nil {
		return err
	}
	u, err := workspace.Caller(ctx, s.store, p.UserID)
	if err != nil {
		return err
	}
	if err := checkNewPassword("new_password", next, u.Email); err != nil {
		return err
	}
	if u.PasswordHash != "" {
		if current == "" {
			return gatehouse.InvalidField("current_password", "current_password is required")
		}
		ok, _, err := s.hasher.Verify(ctx, current, u.PasswordHash)
		if err != nil {
			return internal("verify password", err)
		}
		if !ok {
			return errWrongCurrent
		}
	}
	hash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return internal("hash password", err)
	}
	return s.store.Tx(ctx, func(tx Store) error {
		if err := liveSession(ctx, tx, p, s.Now()); err != nil {
			return err
		}
		err := tx.ReplacePasswordHash(ctx, u.ID, u.PasswordHash, hash)
		if errors.Is(err, gatehouse.ErrNotFound) {
			// Changed by another request since it was checked.
			return gatehouse.Errorf(gatehouse.KindForbidden, "current password is wrong").WithField("current_password")
		}
		if err != nil {
			return internal("set password", err)
		}
		if err := tx.RevokeUserSessions(ctx, u.ID, p.SessionID, s.Now()); err != nil {
			return internal("revoke sessions", err)
		}
		var meta map[string]any
		if ch.RevokeKeys {
			n, err := tx.RevokePersonalKeys(ctx, u.ID, s.Now())
			if err != nil {
				return internal("revoke keys", err)
			}
			meta = map[string]any{"api_keys_revoked": n}
		}
		if err := s.ws.Audit(ctx, tx, p.OrgID, u.ID, "user.password_changed", "user", u.ID, meta); err != nil {
			return err
		}
		return s.notify(ctx, tx, u.ID, NoticePassword)
	})
}

// Resend outcomes of ResendVerification.
const (
	ResendAlreadyVerified = "email is already verified"
	ResendThrottled       = "a confirmation link was sent less than a minute ago; check your inbox"
	ResendSent            = "confirmation link sent"
)

// ResendVerification mails a new confirmation link unless the address is
// verified or a still-usable link went out within the last minute.
func (s *Service) ResendVerification(ctx context.Context, p *gatehouse.Principal) (string, error) {
	var outcome string
	err := s.store.Tx(ctx, func(tx Store) error {
		// Lock the account so concurrent resends see each other's links.
		if err := tx.LockUser(ctx, p.UserID); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("lock user", err)
		}
		u, err := workspace.Caller(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		if u.EmailVerified {
			outcome = ResendAlreadyVerified
			return nil
		}
		now := s.Now()
		last, err := tx.LatestEmailToken(ctx, u.ID, PurposeVerifyEmail)
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return internal("latest token", err)
		}
		if last != nil && last.UsedAt == nil && last.ExpiresAt.After(now) && now.Sub(last.CreatedAt) < ResendThrottle {
			outcome = ResendThrottled
			return nil
		}
		secret := token.NewSecret("")
		if err := tx.CreateEmailToken(ctx, &EmailToken{Hash: token.Hash(secret), Purpose: PurposeVerifyEmail, Email: u.Email,
			UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(VerifyEmailTTL)}); err != nil {
			return internal("create confirmation token", err)
		}
		if err := tx.QueueMail(ctx, s.verifyMail(i18n.For(ctx, u.Language), u.Email, secret)); err != nil {
			return internal("queue confirmation mail", err)
		}
		outcome = ResendSent
		return nil
	})
	if err != nil {
		return "", err
	}
	return outcome, nil
}

// ResendThrottle is the least time between two confirmation mails.
const ResendThrottle = time.Minute

// MyOrg is the caller's listing of one workspace (name, role, member
// count): one read, for pages about that workspace; nil when the caller is
// not its member.
func (s *Service) MyOrg(ctx context.Context, p *gatehouse.Principal, orgID string) (*workspace.OrgListing, error) {
	if !gatehouse.IsID(orgID) {
		return nil, nil
	}
	o, err := s.store.UserOrg(ctx, p.UserID, orgID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find org", err)
	}
	return o, nil
}

// MyOrgs lists every live org the caller belongs to and the id of their
// default org. The personal org is created first if it is missing, and a
// default that is gone falls back to it.
func (s *Service) MyOrgs(ctx context.Context, p *gatehouse.Principal) ([]workspace.OrgListing, string, error) {
	u, err := workspace.Caller(ctx, s.store, p.UserID)
	if err != nil {
		return nil, "", err
	}
	return s.OrgsOf(ctx, u)
}

// OrgsOf is MyOrgs for a user this request has already read (the hosted
// pages read the user with the browser's session): one round trip fewer.
// The repair, when one is needed, reads the user again in its transaction.
func (s *Service) OrgsOf(ctx context.Context, u *gatehouse.User) ([]workspace.OrgListing, string, error) {
	orgs, err := s.store.UserOrgs(ctx, u.ID)
	if err != nil {
		return nil, "", internal("list orgs", err)
	}
	personal, defaultLive := false, false
	for _, o := range orgs {
		personal = personal || o.Kind == workspace.OrgPersonal
		defaultLive = defaultLive || o.ID == u.DefaultOrgID
	}
	if personal && defaultLive {
		return orgs, u.DefaultOrgID, nil
	}
	id := u.ID
	err = s.store.Tx(ctx, func(tx Store) (err error) {
		u, err = workspace.Caller(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := s.ws.PersonalOrg(ctx, tx, u); err != nil {
			return err
		}
		_, err = s.ws.HomeOrg(ctx, tx, u)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	orgs, err = s.store.UserOrgs(ctx, u.ID)
	if err != nil {
		return nil, "", internal("list orgs", err)
	}
	return orgs, u.DefaultOrgID, nil
}

// Sessions lists the caller's live sign-in sessions, newest first.
func (s *Service) Sessions(ctx context.Context, p *gatehouse.Principal) ([]Session, error) {
	ss, err := s.store.ListSessions(ctx, p.UserID, s.Now())
	if err != nil {
		return nil, internal("list sessions", err)
	}
	return ss, nil
}

var errSessionEnded = gatehouse.Errorf(gatehouse.KindUnauthorized, "this session has ended; sign in again")

// LiveSession checks that the sign-in session behind a full session's
// access token is still live: a token of a session that was signed out,
// revoked (a password change, DELETE /v1/me/sessions/{sid}, refresh-token
// reuse, a proof of the mailbox by its owner: claimMailbox) or deleted with
// its account answers 401 at once instead of living out its hour. It costs
// one read by primary key.
func (s *Service) LiveSession(ctx context.Context, p *gatehouse.Principal) error {
	return liveSession(ctx, s.store, p, s.Now())
}

// liveSession is LiveSession through st: the writes a revoked session must
// not make (setting the first password, creating a key) check it again in
// their own transaction, so a revocation committed after the route's check
// still stops them.
func liveSession(ctx context.Context, st Store, p *gatehouse.Principal, now time.Time) error {
	_, err := ownSession(ctx, st, p, now)
	return err
}

// ownSession reads the caller's session through st: errSessionEnded
// unless it is live and the caller's.
func ownSession(ctx context.Context, st Store, p *gatehouse.Principal, now time.Time) (*Session, error) {
	if p.SessionID == "" {
		return nil, errSessionEnded
	}
	ss, err := st.SessionByID(ctx, p.SessionID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errSessionEnded
	}
	if err != nil {
		return nil, internal("find session", err)
	}
	if ss.RevokedAt != nil || !now.Before(ss.ExpiresAt) || ss.UserID != p.UserID {
		return nil, errSessionEnded
	}
	return ss, nil
}

// RevokeSession revokes one of the caller's sessions; an unknown, foreign or
// already revoked session reads as not found.
func (s *Service) RevokeSession(ctx context.Context, p *gatehouse.Principal, id string) error {
	notFound := gatehouse.Errorf(gatehouse.KindNotFound, "session not found")
	if !gatehouse.IsID(id) {
		return notFound
	}
	if id != p.SessionID {
		// Ending another session is a sensitive change (ASVS 7.5.1);
		// signing out this one is not.
		if err := s.RequireRecentAuth(ctx, p, "end another session"); err != nil {
			return err
		}
	}
	return s.store.Tx(ctx, func(tx Store) error {
		ss, err := tx.SessionByID(ctx, id)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (ss.UserID != p.UserID || ss.GrantID != "")) {
			return notFound
		}
		if err != nil {
			return internal("find session", err)
		}
		ok, err := tx.RevokeSession(ctx, id, s.Now())
		if err != nil {
			return internal("revoke session", err)
		}
		if !ok {
			return notFound
		}
		return s.ws.Audit(ctx, tx, p.OrgID, p.UserID, "session.revoked", "session", id, nil)
	})
}

// Grants lists the caller's connected OAuth apps.
func (s *Service) Grants(ctx context.Context, p *gatehouse.Principal) ([]Grant, error) {
	gs, err := s.store.ListGrants(ctx, p.UserID)
	if err != nil {
		return nil, internal("list grants", err)
	}
	return gs, nil
}

// RevokeGrant disconnects an OAuth app: the grant and its refresh tokens
// stop working at once.
func (s *Service) RevokeGrant(ctx context.Context, p *gatehouse.Principal, id string) error {
	if !gatehouse.IsID(id) {
		return gatehouse.Errorf(gatehouse.KindNotFound, "grant not found")
	}
	return s.store.Tx(ctx, func(tx Store) error {
		err := tx.RevokeGrant(ctx, p.UserID, id, s.Now())
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "grant not found")
		}
		if err != nil {
			return internal("revoke grant", err)
		}
		return s.ws.Audit(ctx, tx, p.OrgID, p.UserID, "grant.revoked", "grant", id, nil)
	})
}
