// Package identity is the domain of people: users, passwords (their
// policy, recovery and the failed-login lockout), magic links, email
// verification and the mailbox claim, sign-in sessions and refresh tokens,
// personal API keys and the key exchange, OAuth grants and the hosted
// pages' browser sessions, with their HTTP handlers (/v1/auth, /v1/me).
// Second factors (TOTP, recovery codes, the step; mfa.go, totp.go) and
// passkeys (WebAuthn; passkeys.go) are here. It builds on workspace: its Store holds workspace's tables,
// so one transaction creates a user and their personal org.
package identity

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/cache"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Lifetimes fixed by the spec (section 8).
const (
	AccessTTL        = workspace.AccessTTL
	RefreshTTL       = 30 * 24 * time.Hour // a session idle this long ends
	SessionMaxAge    = 90 * 24 * time.Hour // default absolute lifetime of a session (Config.SessionMaxAge)
	ReauthWindow     = 15 * time.Minute    // default age of a sign-in that sensitive changes accept (Config.ReauthWindow)
	MagicLinkTTL     = 15 * time.Minute
	VerifyEmailTTL   = 24 * time.Hour
	RecoveryTTL      = time.Hour        // a password-reset link (issue 13 item 6)
	RefreshReuseSkew = 10 * time.Second // a rotated token presented later than this is theft
	KeyTokenTTL      = 15 * time.Minute // access tokens from key exchange
)

// Input bounds decided in docs/decisions.md.
const (
	MinPassword = 8
	MaxPassword = 1024 // bytes; bounds hashing work
)

// Config wires a Service.
type Config struct {
	Store     Store
	Workspace *workspace.Service // the orgs people sign in to
	// Signer signs and verifies the access tokens (token.Alg, under the
	// HS256 secret); Issuer is their iss (the base URL).
	Signer keys.Signer
	Issuer string
	Hasher *password.Hasher // nil: the production parameters
	// TOTP seals the TOTP secrets at rest (seal.New(master, "totp")).
	TOTP      *seal.Box
	Logger    *slog.Logger
	Now       func() time.Time // nil: time.Now
	WebURL    string           // base of links in emails
	MobileURL string           // base of magic links requested with client=mobile
	// Brand names the product in the mail the service writes.
	Brand mail.Brand
	// SessionMaxAge is the absolute lifetime of a session, which
	// refreshing never extends (GATEHOUSE_SESSION_MAX_AGE); 0: SessionMaxAge.
	SessionMaxAge time.Duration
	// ReauthWindow is how recent the sign-in of a session must be for a
	// sensitive change (GATEHOUSE_REAUTH_WINDOW); 0: ReauthWindow.
	ReauthWindow time.Duration
	// Revocations is the instance's revocation list every bearer token is
	// checked against; nil: none (tokens live out their lifetime).
	Revocations *revocation.List
	// NoLockout turns off the failed-password lockout (lockout.go); the
	// zero value keeps it on (GATEHOUSE_RATE_LIMIT=off sets it).
	NoLockout bool
	// Limits keeps the lockout's buckets where every instance of the
	// deployment shares them; nil: in memory.
	Limits *ratelimit.Shared
	// Events records the security events (sign-ins, the second factor,
	// recovery, key exchanges, lockouts); nil: none.
	Events Events
	// SSOGate refuses password and magic-link sign-in to an address whose
	// workspace enforces single sign-on (internal/sso); nil: none.
	SSOGate SSOGate
}

// SSOGate is the enforce-SSO rule as identity asks it: method is
// MethodPassword or MethodMagicLink, userID the account ("" when none
// exists yet) and emailKey its address. It reads on a connection of its
// own, so identity asks it outside any transaction (inside one, every
// pooled connection could be held by a transaction waiting for another).
type SSOGate interface {
	AllowSignIn(ctx context.Context, method, userID, emailKey string) error
}

// Service carries out every identity operation.
type Service struct {
	store     Store
	ws        *workspace.Service
	signer    keys.Signer
	issuer    string
	hasher    *password.Hasher
	totp      *seal.Box
	log       *slog.Logger
	now       func() time.Time
	webURL    string
	mobileURL string
	brand     mail.Brand
	users     cache.Short[string, gatehouse.User]
	lockout   *lockout // nil: off
	revoked   *revocation.List
	policy    SessionPolicy
	reauth    time.Duration
	// rp is the WebAuthn relying party of WebURL; nil when WebURL is not
	// an http(s) origin, which leaves passkeys off (503).
	rp     *webauthn.WebAuthn
	events Events
	gate   SSOGate    // nil: no workspace enforces SSO
	audits auditQueue // entries written after their answers (auditLater)
	// grantOf is what introspection keeps of an OAuth session's grant.
	grantOf cache.Short[string, sessionGrant]
	// magicPerEmail bounds the sign-in links asked for one address,
	// whatever the asking IP, and recoverPerEmail the reset links (nil:
	// no limits; see LimitAddresses).
	magicPerEmail, recoverPerEmail *ratelimit.Limiter
}

// LimitAddresses bounds the links mailed to one address with k's limiters
// LimitMagicPerEmail and LimitRecoverPerEmail, whichever edge asks (the API
// or a page): an address has one budget. Call it before serving.
func (s *Service) LimitAddresses(k Limiters) {
	s.magicPerEmail, s.recoverPerEmail = LimitMagicPerEmail.From(k), LimitRecoverPerEmail.From(k)
}

// New returns a Service.
func New(c Config) *Service {
	s := &Service{store: c.Store, ws: c.Workspace, signer: c.Signer, issuer: c.Issuer, hasher: c.Hasher, totp: c.TOTP, log: c.Logger, now: c.Now,
		webURL: strings.TrimRight(c.WebURL, "/"), mobileURL: strings.TrimRight(c.MobileURL, "/"), revoked: c.Revocations, brand: c.Brand, reauth: c.ReauthWindow,
		events: c.Events, gate: c.SSOGate}
	if s.reauth <= 0 {
		s.reauth = ReauthWindow
	}
	s.policy = SessionPolicy{Idle: RefreshTTL, Absolute: c.SessionMaxAge}
	if s.policy.Absolute <= 0 {
		s.policy.Absolute = SessionMaxAge
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.hasher == nil {
		s.hasher = password.NewHasher(password.OWASP, 0)
	}
	if s.mobileURL == "" {
		s.mobileURL = s.webURL
	}
	if !c.NoLockout {
		s.lockout = newLockout(s.now, c.Limits)
	}
	rp, err := newRelyingParty(s.webURL)
	if err != nil {
		s.log.Warn("passkeys are off", "err", err)
	}
	s.rp = rp
	return s
}

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now().UTC() }

// firstEnd is when a session opened at now at level lvl ends unless it is
// used: a session owing its second factor lives MFAPendingTTL, any other
// RefreshTTL within its absolute lifetime.
func (s *Service) firstEnd(lvl gatehouse.Assurance, now time.Time) time.Time {
	if lvl.Pending {
		return now.Add(sessionTTL(lvl))
	}
	return s.policy.End(now, now)
}

// Health reports whether the database answers.
func (s *Service) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return s.store.Ping(ctx)
}

func checkPassword(field, pw string) error {
	if pw == "" {
		return gatehouse.InvalidField(field, "%s is required", field)
	}
	if utf8.RuneCountInString(pw) < MinPassword {
		return gatehouse.InvalidField(field, "%s must be at least %d characters", field, MinPassword)
	}
	if len(pw) > MaxPassword {
		return gatehouse.InvalidField(field, "%s must be at most %d bytes", field, MaxPassword)
	}
	return nil
}

// mint issues an access token for user scoped to oc; an OAuth grant's
// binding puts its resources (RFC 8707) beside "gatehouse" in the audience
// and its scope in the token. A token owing its second factor lives no
// longer than a pending session (MFAPendingTTL).
func (s *Service) mint(userID, sessionID, via string, lvl gatehouse.Assurance, oc *workspace.OrgContext, ttl time.Duration, b ...binding) (string, time.Time, error) {
	return s.mintUntil(time.Time{}, userID, sessionID, via, lvl, oc, ttl, b...)
}

// binding is what an OAuth grant binds its tokens to: the resources of
// their audience and the scope they carry.
type binding struct {
	resources []string
	scope     string
}

// mintUntil is mint of a token of a session whose absolute lifetime ends
// at end (zero: no bound): the token expires ttl from now or at end,
// whichever is sooner, so it never outlives its session (issue 23 item 7).
func (s *Service) mintUntil(end time.Time, userID, sessionID, via string, lvl gatehouse.Assurance, oc *workspace.OrgContext, ttl time.Duration, bs ...binding) (string, time.Time, error) {
	if lvl.Pending && ttl > MFAPendingTTL {
		ttl = MFAPendingTTL
	}
	now := s.Now()
	if left := end.Sub(now); !end.IsZero() && left < ttl {
		ttl = max(left, 0)
	}
	var b binding
	if len(bs) > 0 {
		b = bs[0]
	}
	c := oc.Claims(sessionID, via, lvl, b.resources...)
	c.Scope = b.scope
	return token.Issue(context.Background(), s.signer, s.issuer, c, userID, now, ttl)
}

// scoped is oc, or, when oc's workspace requires a level that lvl misses,
// u's personal workspace (which requires none): a token for a workspace
// is never minted below its policy. The default workspace stays as it
// is, so a sign-in at the level lands there again.
func (s *Service) scoped(ctx context.Context, st Store, u *gatehouse.User, oc *workspace.OrgContext, lvl gatehouse.Assurance) (*workspace.OrgContext, error) {
	if !oc.RequireMFA || lvl.AAL == gatehouse.AAL2 {
		return oc, nil
	}
	o, err := s.ws.PersonalOrg(ctx, st, u)
	if err != nil {
		return nil, err
	}
	return s.ws.OrgContext(ctx, st, o, workspace.RoleOwner)
}

// AbsoluteEnd is when a session created at created ends however it is
// refreshed (the policy's), for workspace, whose workspace changes mint
// tokens of the caller's session that expire by then.
func (s *Service) AbsoluteEnd(created time.Time) time.Time { return s.policy.AbsoluteEnd(created) }

// verify checks an access token (token.Verify at the clock's now).
func (s *Service) verify(ctx context.Context, raw string) (*token.Claims, error) {
	return token.Verify(ctx, s.signer, s.issuer, s.now(), raw)
}

var errRevoked = gatehouse.Errorf(gatehouse.KindUnauthorized, "this access token has been revoked; sign in again")

// Authenticate verifies a bearer access token and returns its principal.
// A token whose session, API key, account, workspace or membership was
// revoked is refused (the in-memory revocation list: no database read).
func (s *Service) Authenticate(raw string) (*gatehouse.Principal, error) {
	p, _, err := s.authenticate(raw)
	return p, err
}

// authenticate is Authenticate that also returns the token's claims, for
// introspection (introspect.go), which answers with its audience and
// issuer: one check of a bearer token, not two.
func (s *Service) authenticate(raw string) (*gatehouse.Principal, *token.Claims, error) {
	c, err := s.verify(context.Background(), raw)
	if err != nil {
		return nil, nil, &gatehouse.Error{Kind: gatehouse.KindUnauthorized, Message: "invalid or expired access token", Err: err}
	}
	p := &gatehouse.Principal{UserID: c.Subject, SessionID: c.SessionID, OrgID: c.Org.ID, Role: c.Org.Role,
		Tools: c.Org.Tools, Via: c.Via, TokenID: c.ID, KeyID: c.KeyID,
		Assurance: gatehouse.Assurance{AAL: c.AAL, AMR: c.AMR, Pending: c.MFA == token.MFAPending}}
	for _, a := range c.Audience {
		if a != token.Audience && a != token.PendingAudience {
			p.Resources = append(p.Resources, a)
		}
	}
	p.Scope = c.Scope
	if p.AAL == "" {
		p.AAL = gatehouse.AAL1 // a token minted before levels were named
	}
	if c.ExpiresAt != nil {
		p.ExpiresAt = c.ExpiresAt.Time
	}
	if c.IssuedAt != nil {
		p.IssuedAt = c.IssuedAt.Time
	}
	if s.Revoked(p) {
		return nil, nil, errRevoked
	}
	return p, c, nil
}

// Revoked reports whether the revocation list refuses the token behind
// p: Authenticate's check, for a caller that keeps a principal it
// authenticated (the introspection endpoint's callers) and asks again.
func (s *Service) Revoked(p *gatehouse.Principal) bool {
	return s.revoked != nil && s.revoked.Refused(revocation.Token{SessionID: p.SessionID, KeyID: p.KeyID, Subject: p.UserID, OrgID: p.OrgID, IssuedAt: p.IssuedAt})
}

// ToolAccess checks, for a tool-API request, that the caller behind p
// still stands in the token's workspace: workspace keeps that standing
// (and forgets it when a member, key or org goes).
func (s *Service) ToolAccess(ctx context.Context, p *gatehouse.Principal) error {
	return s.ws.ToolAccess(ctx, p)
}

// internal wraps an unexpected error with context, as gatehouse.Internal
// does; a busy password hasher answers 503 instead of 500.
func internal(what string, err error) error {
	var e *gatehouse.Error
	if !errors.As(err, &e) && errors.Is(err, password.ErrBusy) {
		return &gatehouse.Error{Kind: gatehouse.KindUnavailable, Message: "too many sign-ins at once; try again in a moment", RetryAfter: time.Second, Err: err}
	}
	return gatehouse.Internal(what, err)
}
