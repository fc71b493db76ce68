package identity

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"

	"golang.org/x/text/language"
)

// RegisterInput is the body of POST /v1/auth/register.
type RegisterInput struct {
	Email    string
	Password string
	Name     string
}

// Register creates an account with its personal org and signs it in. The
// confirmation link is mailed best effort after the account is committed.
func (s *Service) Register(ctx context.Context, in RegisterInput, meta gatehouse.SessionMeta) (*SignIn, error) {
	key, email, err := gatehouse.ParseEmail(in.Email)
	if err != nil {
		return nil, err
	}
	if err := checkNewPassword("password", in.Password, email); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return nil, err
	}
	if len([]rune(name)) > workspace.MaxName {
		return nil, gatehouse.InvalidField("name", "name must be at most %d characters", workspace.MaxName)
	}
	if name == "" {
		name = email[:strings.IndexByte(email, '@')]
	}
	// Hash before the transaction: the writer is never held for 20 ms of argon2.
	hash, err := s.hasher.Hash(ctx, in.Password)
	if err != nil {
		return nil, internal("hash password", err)
	}
	now := s.Now()
	u := &gatehouse.User{ID: gatehouse.NewID(), Email: email, EmailKey: key, Name: name, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	verifyToken := token.NewSecret("")
	var out *SignIn
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
		if err := tx.CreateEmailToken(ctx, &EmailToken{Hash: token.Hash(verifyToken), Purpose: PurposeVerifyEmail, Email: email,
			UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(VerifyEmailTTL)}); err != nil {
			return internal("create confirmation token", err)
		}
		if err := tx.QueueMail(ctx, s.verifyMail(i18n.From(ctx), email, verifyToken)); err != nil {
			return internal("queue confirmation mail", err)
		}
		if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.registered", "user", u.ID, map[string]any{"via": gatehouse.ViaPassword}); err != nil {
			return internal("audit", err)
		}
		out, err = s.startSession(ctx, tx, u, oc, gatehouse.ViaPassword, meta)
		return err
	})
	return out, err
}

// verifyMail is the message that carries an address's confirmation link.
func (s *Service) verifyMail(lang language.Tag, email, secret string) mail.Message {
	link := s.webURL + "/verify-email?token=" + url.QueryEscape(secret)
	return mail.Message{To: email, Subject: i18n.T(lang, "Confirm your email address"),
		Text: i18n.Tf(lang, "Someone signed up for %[1]s with this address. If it was you, confirm your address by opening this link:\n\n%[2]s\n\n"+
			"The link works once and expires in 24 hours.\n\nIf you did not sign up, ignore this message and do not open the link: whoever signed up chose the password. "+
			"To use %[1]s with this address yourself, sign in with an emailed sign-in link instead; that removes the password, two-factor settings and passkeys set before and signs everyone else out.\n",
			s.brand.Product(), link)}
}

// startSession opens a sign-in session for u scoped to oc and returns its
// first access and refresh tokens. An account with a second factor gets a
// session at aal1 that owes it (SignIn.Factors): only the step, the
// caller's description and logout answer its tokens.
func (s *Service) startSession(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, via string, meta gatehouse.SessionMeta) (*SignIn, error) {
	return s.startSessionAt(ctx, st, u, oc, via, gatehouse.Assurance{}, "", meta)
}

// startSessionAt is startSession of a sign-in whose first step proved lvl:
// one method (aal1) owes the account's second factor if it has one; two
// (a verified passkey: aal2) owe nothing. firstPasskey is the passkey of
// a passkey sign-in ("" otherwise): the step owed is taken with another
// credential, so it is neither offered nor accepted (factorsOf).
func (s *Service) startSessionAt(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, via string, lvl gatehouse.Assurance,
	firstPasskey string, meta gatehouse.SessionMeta) (*SignIn, error) {
	out, sess, err := s.signInAt(ctx, st, u, oc, via, lvl, firstPasskey, meta)
	if err != nil {
		return nil, err
	}
	if err := st.CreateSession(ctx, sess); err != nil {
		return nil, internal("create session", err)
	}
	return out, nil
}

// signInAt is startSessionAt without its one write: the session to store
// and the answer to give once it is stored. It only reads, so a caller
// whose write transaction queues for the one SQLite writer (passkey
// finishes) runs it before, beside the others, and keeps the transaction
// to its writes.
func (s *Service) signInAt(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, via string, lvl gatehouse.Assurance,
	firstPasskey string, meta gatehouse.SessionMeta) (*SignIn, *Session, error) {
	var factors []string
	if lvl.AAL != gatehouse.AAL2 {
		var err error
		if factors, err = s.factorsOf(ctx, st, u.ID, firstPasskey); err != nil {
			return nil, nil, internal("find factors", err)
		}
	}
	lvl.Pending = len(factors) > 0
	lvl = lvl.Level(via)
	sess := s.newSession(u.ID, via, lvl, meta)
	sess.FirstPasskeyID = firstPasskey
	oc, err := s.scoped(ctx, st, u, oc, sess.Level)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.issueSession(u, oc, sess)
	if err != nil {
		return nil, nil, err
	}
	if lvl.Pending {
		out.Factors = factors
	}
	return out, sess, nil
}

// openSession stores sess and issues its first pair, scoped to oc unless
// oc requires a level sess lacks (then to the personal workspace).
func (s *Service) openSession(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, sess *Session) (*SignIn, error) {
	oc, err := s.scoped(ctx, st, u, oc, sess.Level)
	if err != nil {
		return nil, err
	}
	return s.storeSession(ctx, st, u, oc, sess)
}

// newSession is a sign-in session of userID opened now at level lvl.
func (s *Service) newSession(userID, via string, lvl gatehouse.Assurance, meta gatehouse.SessionMeta) *Session {
	now := s.Now()
	return &Session{ID: gatehouse.NewID(), UserID: userID, Via: via, UserAgent: truncate(meta.UserAgent, 512), IP: meta.IP,
		CreatedAt: now, ExpiresAt: s.firstEnd(lvl, now), LastUsedAt: now, Level: lvl}
}

// storeSession stores sess with its first refresh token and issues the
// pair, the access token scoped to oc (and resources, an OAuth grant's).
func (s *Service) storeSession(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, sess *Session, b ...binding) (*SignIn, error) {
	out, err := s.issueSession(u, oc, sess, b...)
	if err != nil {
		return nil, err
	}
	if err := st.CreateSession(ctx, sess); err != nil {
		return nil, internal("create session", err)
	}
	return out, nil
}

// issueSession gives sess its first refresh token (its hash in sess, to
// be stored) and mints the pair; it writes nothing.
func (s *Service) issueSession(u *gatehouse.User, oc *workspace.OrgContext, sess *Session, b ...binding) (*SignIn, error) {
	if u.DisabledAt != nil { // every sign-in and grant opens its session here
		return nil, errDisabled
	}
	refresh, hash := newRefresh(sess.ID)
	sess.RefreshHash = hash
	access, exp, err := s.mintUntil(s.policy.AbsoluteEnd(sess.CreatedAt), u.ID, sess.ID, sess.Via, sess.Level, oc, AccessTTL, b...)
	if err != nil {
		return nil, internal("mint", err)
	}
	return &SignIn{AccessToken: access, ExpiresAt: exp, RefreshToken: refresh, User: u, Org: oc, SessionID: sess.ID, GrantID: sess.GrantID}, nil
}

// truncate makes client-supplied text (a User-Agent) storable: valid UTF-8
// without NUL, at most n bytes, cut at a character boundary.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// login is Login without the lockout; it also names the account refused
// a wrong password, when there is one.
func (s *Service) login(ctx context.Context, email, pw string, meta gatehouse.SessionMeta) (*SignIn, string, error) {
	if strings.TrimSpace(email) == "" {
		return nil, "", gatehouse.InvalidField("email", "email is required")
	}
	if pw == "" {
		return nil, "", gatehouse.InvalidField("password", "password is required")
	}
	if len(pw) > MaxPassword {
		return nil, "", errBadCredentials
	}
	// A malformed address is a bad email like an unknown one (spec section
	// 7): 401 after the same hash, the factor not distinguished.
	var u *gatehouse.User
	if key, _, err := gatehouse.ParseEmail(email); err == nil {
		if u, err = s.store.UserByEmail(ctx, key); errors.Is(err, gatehouse.ErrNotFound) {
			u = nil
		} else if err != nil {
			return nil, "", internal("find user", err)
		}
	}
	stored := ""
	if u != nil {
		stored = u.PasswordHash
	}
	ok, rehash, err := s.hasher.Verify(ctx, pw, stored)
	if err != nil {
		return nil, "", internal("verify password", err)
	}
	if u == nil {
		return nil, "", errBadCredentials
	}
	if !ok {
		return nil, u.ID, errBadCredentials
	}
	if u.DisabledAt != nil { // as a wrong password: the answer tells nothing of the account
		return nil, "", errBadCredentials
	}
	// Only after the password: whoever lacks it learns nothing of the account.
	if err := s.allowSignIn(ctx, MethodPassword, u.ID, u.EmailKey); err != nil {
		return nil, "", err
	}
	if rehash {
		if h, err := s.hasher.Hash(ctx, pw); err == nil {
			if err := s.store.ReplacePasswordHash(ctx, u.ID, stored, h); err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
				s.log.Warn("password rehash not stored", "err", err)
			}
		}
	}
	var out *SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		// Read again inside the transaction: the account may have been
		// deleted since the password check.
		u, err := tx.PinUser(ctx, u.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errBadCredentials
		}
		if err != nil {
			return internal("find user", err)
		}
		if u.PasswordHash != stored || u.DisabledAt != nil {
			// Changed or removed since the check (a proof of the mailbox
			// removes a password set before it, see claimMailbox).
			return errBadCredentials
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		if out, err = s.startSession(ctx, tx, u, oc, gatehouse.ViaPassword, meta); err != nil {
			return err
		}
		return s.auditSignIn(ctx, tx, out, MethodPassword, meta)
	})
	return out, u.ID, err
}

// RequestMagicLink mails a single-use sign-in link to email. It answers the
// same whether or not an account exists: verifying the link signs the
// address up when it has none. Past the address's budget
// (LimitAddresses) it is a KindTooMany error and mails nothing.
func (s *Service) RequestMagicLink(ctx context.Context, email, client string) error {
	key, email, err := gatehouse.ParseEmail(email)
	if err != nil {
		return err
	}
	if ok, wait := s.magicPerEmail.Allow(key); !ok {
		return gatehouse.TooMany(wait)
	}
	if err := s.allowSignIn(ctx, MethodMagicLink, "", key); err != nil {
		return err
	}
	secret := token.NewSecret("")
	now := s.Now()
	t := &EmailToken{Hash: token.Hash(secret), Purpose: PurposeMagicLink, Email: email, CreatedAt: now, ExpiresAt: now.Add(MagicLinkTTL)}
	base := s.webURL
	if client == "mobile" {
		base = s.mobileURL
	}
	link := base + "/auth/magic?token=" + url.QueryEscape(secret)
	// In the account's language when the address has one, else the
	// request's (the same query runs either way).
	code := ""
	if u, err := s.store.UserByEmail(ctx, gatehouse.EmailKey(email)); err == nil {
		code = u.Language
	}
	m := s.magicMail(i18n.For(ctx, code), email, link)
	return s.store.Tx(ctx, func(tx Store) error {
		if err := tx.CreateEmailToken(ctx, t); err != nil {
			return internal("create magic link", err)
		}
		if err := tx.QueueMail(ctx, m); err != nil {
			return internal("queue magic link mail", err)
		}
		return nil
	})
}

// magicMail is the message that carries a sign-in link, in lang.
func (s *Service) magicMail(lang language.Tag, email, link string) mail.Message {
	return mail.Message{To: email, Subject: i18n.T(lang, "Your sign-in link"),
		Text: i18n.Tf(lang, "Open this link to sign in to %s:\n\n%s\n\nThe link works once and expires in 15 minutes. If you did not ask for it, ignore this message.\n",
			s.brand.Product(), link)}
}

// verifyMagicLink is VerifyMagicLink without the unlock.
func (s *Service) verifyMagicLink(ctx context.Context, secret string, meta gatehouse.SessionMeta) (*SignIn, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	// A link mailed before the workspace enforced SSO no longer works;
	// asked before the transaction (the gate reads on a connection of
	// its own).
	if t, err := s.store.PeekEmailToken(ctx, token.Hash(secret), PurposeMagicLink, s.Now()); err == nil {
		if err := s.allowSignIn(ctx, MethodMagicLink, "", gatehouse.EmailKey(t.Email)); err != nil {
			return nil, err
		}
	}
	var out *SignIn
	err := s.store.Tx(ctx, func(tx Store) error {
		t, err := tx.UseEmailToken(ctx, token.Hash(secret), PurposeMagicLink, s.Now())
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")
		}
		if err != nil {
			return internal("use magic link", err)
		}
		// The token holds the address as typed; the account is found by
		// its key, so a link to any spelling of it signs in to the one account.
		key := gatehouse.EmailKey(t.Email)
		u, err := tx.UserByEmail(ctx, key)
		if errors.Is(err, gatehouse.ErrNotFound) {
			now := s.Now()
			u = &gatehouse.User{ID: gatehouse.NewID(), Email: t.Email, EmailKey: key, Name: t.Email[:strings.IndexByte(t.Email, '@')], EmailVerified: true, CreatedAt: now, UpdatedAt: now}
			err = tx.CreateUser(ctx, u)
			if errors.Is(err, gatehouse.ErrConflict) {
				// Another link or a registration created the account
				// meanwhile: sign in to that one.
				u, err = tx.UserByEmail(ctx, key)
			} else if err == nil {
				err = gatehouse.ErrNotFound // created here: set up below
			}
		}
		switch {
		case err == nil:
			// Opening the link proves the address: an account whose
			// address was never verified is claimed (claimMailbox).
			u, err = s.claimMailbox(ctx, tx, u, gatehouse.ViaMagicLink)
			if errors.Is(err, gatehouse.ErrNotFound) {
				return gatehouse.Errorf(gatehouse.KindUnauthorized, "this account no longer exists")
			}
			if err != nil {
				return err
			}
		case errors.Is(err, gatehouse.ErrNotFound):
			oc, err := s.ws.HomeOrg(ctx, tx, u)
			if err != nil {
				return err
			}
			if err := s.ws.Audit(ctx, tx, oc.ID, u.ID, "user.registered", "user", u.ID, map[string]any{"via": gatehouse.ViaMagicLink}); err != nil {
				return internal("audit", err)
			}
			if err := s.ws.AutoJoin(ctx, tx, u); err != nil {
				return err
			}
		default:
			return internal("find user", err)
		}
		oc, err := s.ws.HomeOrg(ctx, tx, u)
		if err != nil {
			return err
		}
		if out, err = s.startSession(ctx, tx, u, oc, gatehouse.ViaMagicLink, meta); err != nil {
			return err
		}
		return s.auditSignIn(ctx, tx, out, MethodMagicLink, meta)
	})
	if out != nil {
		s.users.Drop(out.User.ID)
	}
	return out, err
}

// VerifyEmail consumes a confirmation token and marks the address verified.
func (s *Service) VerifyEmail(ctx context.Context, secret string) (*gatehouse.User, error) {
	if secret == "" {
		return nil, gatehouse.Invalid("token is required")
	}
	var u *gatehouse.User
	err := s.store.Tx(ctx, func(tx Store) error {
		t, err := tx.UseEmailToken(ctx, token.Hash(secret), PurposeVerifyEmail, s.Now())
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")
		}
		if err != nil {
			return internal("use confirmation token", err)
		}
		u, err = tx.UserByID(ctx, t.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && u.Email != t.Email) {
			return gatehouse.Errorf(gatehouse.KindUnauthorized, "invalid, expired or already used link")
		}
		if err != nil {
			return internal("find user", err)
		}
		if u.EmailVerified {
			return nil
		}
		u.EmailVerified, u.UpdatedAt = true, s.Now()
		if err := tx.UpdateUser(ctx, u); err != nil {
			return internal("verify email", err)
		}
		if u.DefaultOrgID != "" {
			if err := s.ws.Audit(ctx, tx, u.DefaultOrgID, u.ID, "user.email_verified", "user", u.ID, nil); err != nil {
				return internal("audit", err)
			}
		}
		// Domain auto-join was withheld until now.
		return s.ws.AutoJoin(ctx, tx, u)
	})
	return u, err
}

// Logout revokes the session of a refresh token. Unknown tokens are ignored:
// logout is idempotent from the client's view.
func (s *Service) Logout(ctx context.Context, secret string) error {
	if secret == "" {
		return nil
	}
	sid, hash, err := s.refreshOwner(ctx, secret)
	if err == nil {
		_, err = s.store.RefreshToken(ctx, sid, hash)
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("find refresh token", err)
	}
	if _, err := s.store.RevokeSession(ctx, sid, s.Now()); err != nil {
		return internal("revoke session", err)
	}
	return nil
}

// SwitchOrg mints a token scoped to orgID, which becomes the caller's
// default org. The refresh token is unchanged.
func (s *Service) SwitchOrg(ctx context.Context, p *gatehouse.Principal, orgID string) (*workspace.OrgToken, error) {
	if orgID == "" {
		return nil, gatehouse.InvalidField("org_id", "org_id is required")
	}
	if p.Via == gatehouse.ViaAPIKey || p.Via == gatehouse.ViaOAuth {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "this token is bound to one workspace and cannot switch")
	}
	o, m, err := workspace.LiveMember(ctx, s.store, orgID, p.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "not a member of this organization")
	}
	if err != nil {
		return nil, internal("switch org", err)
	}
	if err := o.Admits(p.Assurance); err != nil {
		return nil, err // refused before it becomes the default
	}
	if err := s.store.SetDefaultOrg(ctx, p.UserID, o.ID); err != nil {
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil, workspace.ErrUnauthorized
		}
		return nil, internal("set default org", err)
	}
	return s.ws.OrgToken(ctx, s.store, p.UserID, p.SessionID, p.Via, p.Assurance, o, m.Role)
}

// Me returns the caller and the workspace their token is scoped to, read live.
func (s *Service) Me(ctx context.Context, p *gatehouse.Principal) (*gatehouse.User, *workspace.OrgContext, error) {
	u, err := s.store.UserByID(ctx, p.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) && p.Via == gatehouse.ViaAPIKey {
		u, err = s.orgKeyUser(ctx, p.UserID, s.Now())
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, nil, gatehouse.Errorf(gatehouse.KindNotFound, "user not found")
	}
	if err != nil {
		return nil, nil, internal("find user", err)
	}
	o, role, err := s.ws.OrgAccess(ctx, s.store, p, p.OrgID)
	if err != nil {
		return nil, nil, err
	}
	oc, err := s.ws.OrgContext(ctx, s.store, o, role)
	if err != nil {
		return nil, nil, internal("org context", err)
	}
	if !p.Full() {
		// A key's or grant's token holds only the tools it was given.
		held := map[string]bool{}
		for _, t := range p.Tools {
			held[t] = true
		}
		tools := []string{}
		for _, t := range oc.Tools {
			if held[t] {
				tools = append(tools, t)
			}
		}
		oc.Tools = tools
	}
	return u, oc, nil
}

// orgKeyUser stands a live org service-account key in for the user behind
// its tokens, whose subject is the key's id; ErrNotFound otherwise.
func (s *Service) orgKeyUser(ctx context.Context, id string, now time.Time) (*gatehouse.User, error) {
	k, err := s.store.APIKeyByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if k.Kind != workspace.KeyOrg || !k.Usable(now) {
		return nil, gatehouse.ErrNotFound
	}
	return &gatehouse.User{ID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt}, nil
}

// VerifyUser returns the user behind a valid token; a deleted user's token
// is no longer valid.
func (s *Service) VerifyUser(ctx context.Context, p *gatehouse.Principal) (*gatehouse.User, error) {
	now := s.Now()
	if u, ok := s.users.Get(p.UserID, now); ok {
		return &u, nil
	}
	u, err := s.store.UserByID(ctx, p.UserID)
	if errors.Is(err, gatehouse.ErrNotFound) && p.Via == gatehouse.ViaAPIKey {
		// An org service-account key: its token's subject is the key.
		if ku, kerr := s.orgKeyUser(ctx, p.UserID, now); kerr == nil {
			u, err = ku, nil
		}
	}
	if err == nil {
		s.users.Put(u.ID, *u, now)
	}
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, workspace.ErrUnauthorized
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	return u, nil
}
