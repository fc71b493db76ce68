package sso

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
	"golang.org/x/oauth2"
)

// The lifetimes of a sign-in under way and of a link waiting for proof.
const (
	FlowTTL = 10 * time.Minute
	LinkTTL = 15 * time.Minute
)

var (
	errNoConnection = gatehouse.Errorf(gatehouse.KindNotFound, "no single sign-on is set up for this address")
	// errFlow answers a callback whose state is unknown, used, expired or
	// not this browser's.
	errFlow = gatehouse.Errorf(gatehouse.KindUnauthorized, "this sign-in expired or was started in another browser; start again")
	// errUpstream answers an ID token or code the provider's answer does
	// not back (the cause is logged, never shown).
	errUpstream = gatehouse.Errorf(gatehouse.KindUnauthorized, "the identity provider's answer could not be verified; start again")
	// errMixUp answers a callback naming another issuer than the one the
	// flow was started at (RFC 9207).
	errMixUp = gatehouse.Errorf(gatehouse.KindUnauthorized, "the answer came from another identity provider than the one this sign-in started at; start again")
)

// Started is a sign-in sent to the identity provider: the URL to send the
// browser to and the secret of the cookie binding the flow to it.
type Started struct {
	URL     string
	Browser string
	// CrossSite is set when the provider answers with a cross-site POST
	// (SAML): the browser's cookie must then be sent on it.
	CrossSite bool
}

// oauthConfig is the OAuth client of c at provider p.
func (s *Service) oauthConfig(c *Connection, p *oidc.Provider) (*oauth2.Config, error) {
	secret, err := s.secrets.Open(c.SealedSecret, []byte(c.ID))
	if err != nil {
		return nil, gatehouse.Internal("open sso secret", err)
	}
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: string(secret), Endpoint: p.Endpoint(), RedirectURL: s.CallbackURL(), Scopes: c.Scopes}, nil
}

// providerTTL is how long a discovery document is kept: its JWK Set is
// fetched again by go-oidc whenever a token names an unknown key.
const providerTTL = 10 * time.Minute

// cachedProvider is a connection's provider as read at fetched.
type cachedProvider struct {
	p       *oidc.Provider
	issuer  string
	fetched time.Time
	// keys is its key set for ID-JAGs, made on first use (verifier).
	keys *keySet
}

// provider reads c's issuer's discovery document, or the copy read
// within providerTTL for the same issuer.
func (s *Service) provider(ctx context.Context, c *Connection) (*oidc.Provider, error) {
	now := s.Now()
	s.mu.Lock()
	cp, ok := s.providers[c.ID]
	s.mu.Unlock()
	if ok && cp.issuer == c.Issuer && now.Sub(cp.fetched) < providerTTL {
		return cp.p, nil
	}
	// The provider keeps the context for its key set's fetches: not the
	// request's, which ends with the request.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), s.client), c.Issuer)
	if err != nil {
		s.log.Warn("sso issuer discovery failed", "connection", c.ID, "err", err)
		return nil, gatehouse.Errorf(gatehouse.KindUnavailable, "the identity provider cannot be reached; try again later")
	}
	s.mu.Lock()
	if len(s.providers) >= 1000 {
		clear(s.providers)
	}
	s.providers[c.ID] = cachedProvider{p: p, issuer: c.Issuer, fetched: now}
	s.mu.Unlock()
	return p, nil
}

// Start begins a sign-in through connection id: a flow with a fresh
// state, nonce and PKCE verifier, bound to a browser secret. next is the
// path of this service to land on after.
func (s *Service) Start(ctx context.Context, id, next string) (*Started, error) {
	if !gatehouse.IsID(id) {
		return nil, errConnNotFound
	}
	c, err := s.store.ConnectionByID(ctx, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errConnNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find sso connection", err)
	}
	if c.SAML != nil {
		return s.startSAML(ctx, c, next)
	}
	return s.startFlow(ctx, c, next)
}

// startFlow begins a sign-in at c's provider (a workspace's connection or
// a social provider): the one start of every upstream OpenID sign-in.
func (s *Service) startFlow(ctx context.Context, c *Connection, next string) (*Started, error) {
	p, err := s.provider(ctx, c)
	if err != nil {
		return nil, err
	}
	cfg, err := s.oauthConfig(c, p)
	if err != nil {
		return nil, err
	}
	state, nonce, browser, verifier := token.NewSecret(""), token.NewSecret(""), token.NewSecret(""), oauth2.GenerateVerifier()
	f := &Flow{StateHash: token.Hash(state), ConnectionID: c.ID, BrowserHash: token.Hash(browser), Nonce: nonce, Verifier: verifier,
		Next: safeNext(next), ExpiresAt: s.Now().Add(FlowTTL)}
	if err := s.store.CreateFlow(ctx, f); err != nil {
		return nil, gatehouse.Internal("create sso flow", err)
	}
	return &Started{URL: cfg.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), Browser: browser}, nil
}

// safeNext is a path of this service, else "/".
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(next, "/") ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\t\r\n") {
		return "/"
	}
	return next
}

// LinkRequired answers a sign-in whose address belongs to an account not
// yet linked to this identity: the person proves the account (signs in
// as they always did) and confirms with Token (POST /v1/sso/link).
type LinkRequired struct{ Token string }

func (e *LinkRequired) Error() string {
	return "an account with this address exists: sign in to it as usual, then confirm linking it to single sign-on"
}

// Done is a completed SSO sign-in.
type Done struct {
	SignIn *identity.SignIn
	Next   string
}

// claims are the ID token's claims sso reads.
type claims struct {
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"` // some providers send "true"
	Name          string `json:"name"`
	// DomainOwnerVerified is Microsoft Entra's xms_edov optional claim:
	// the address's domain is one its tenant verified. Entra never sends
	// email_verified for organization accounts.
	DomainOwnerVerified any `json:"xms_edov"`
}

func (c *claims) verified() bool { return truthy(c.EmailVerified) }

// workspaceVerified is verified for a workspace's connection: also
// Entra's xms_edov when the token carries no email_verified at all (the
// address must besides be in a domain the workspace verified by DNS).
func (c *claims) workspaceVerified() bool {
	return c.verified() || (c.EmailVerified == nil && truthy(c.DomainOwnerVerified))
}

// truthy is a boolean claim, true or "true".
func truthy(claim any) bool {
	switch v := claim.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

// Callback completes a sign-in: the flow of state, used once and only by
// the browser that started it; the code exchanged with its PKCE verifier;
// the ID token verified (signature, iss, aud, exp) with its nonce; then
// the person resolved and signed in. Every outcome is audited in the
// connection's workspace. iss is the callback's RFC 9207 issuer ("" when
// the provider sends none): another provider's answers a mix-up.
func (s *Service) Callback(ctx context.Context, state, code, browser, iss string, meta gatehouse.SessionMeta) (*Done, error) {
	if state == "" || code == "" || browser == "" {
		return nil, errFlow
	}
	f, err := s.store.UseFlow(ctx, token.Hash(state), s.Now())
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errFlow
	}
	if err != nil {
		return nil, gatehouse.Internal("use sso flow", err)
	}
	if subtle.ConstantTimeCompare([]byte(f.BrowserHash), []byte(token.Hash(browser))) != 1 {
		return nil, errFlow
	}
	if c, ok := s.social[f.ConnectionID]; ok {
		return s.socialCallback(ctx, c, f, code, iss, meta)
	}
	c, err := s.store.ConnectionByID(ctx, f.ConnectionID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errFlow
	}
	if err != nil {
		return nil, gatehouse.Internal("find sso connection", err)
	}
	if iss != "" && iss != c.Issuer {
		s.auditOutcome(ctx, c, nil, "", errMixUp)
		return nil, errMixUp
	}
	out, subject, err := s.complete(ctx, c, f, code, meta)
	s.auditOutcome(ctx, c, out, subject, err)
	if err != nil {
		return nil, err
	}
	return &Done{SignIn: out, Next: f.Next}, nil
}

// complete is Callback's work once the flow is found: the sign-in and
// the upstream subject (for the audit entry).
func (s *Service) complete(ctx context.Context, c *Connection, f *Flow, code string, meta gatehouse.SessionMeta) (*identity.SignIn, string, error) {
	idt, cl, err := s.verify(ctx, c, f, code)
	if idt == nil {
		return nil, "", err
	}
	if err != nil {
		return nil, idt.Subject, err
	}
	if !cl.workspaceVerified() {
		return nil, idt.Subject, gatehouse.Errorf(gatehouse.KindForbidden, "your identity provider does not assert that your email address is verified")
	}
	var raw map[string]any
	if err := idt.Claims(&raw); err != nil {
		return nil, idt.Subject, errUpstream
	}
	attrs := claimAttributes(raw)
	si, err := s.admit(ctx, c, idt.Subject, cl.Email, c.mappedName(attrs, cl.Name), attrs, meta)
	return si, idt.Subject, err
}

// admit signs in the person whose identity c's provider vouched for
// (OpenID Connect or SAML): the address must be in one of c's domains,
// still verified by c's workspace.
func (s *Service) admit(ctx context.Context, c *Connection, subject, rawEmail, name string, attrs attributes, meta gatehouse.SessionMeta) (*identity.SignIn, error) {
	key, email, err := gatehouse.ParseEmail(rawEmail)
	if err != nil {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "your identity provider sent no usable email address")
	}
	domain := key[strings.LastIndexByte(key, '@')+1:]
	if !slices.Contains(c.Domains, domain) {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "this connection does not serve addresses at %s", clip(domain))
	}
	if by, err := s.store.DomainVerifiedBy(ctx, domain); err != nil || by != c.OrgID {
		return nil, gatehouse.Errorf(gatehouse.KindForbidden, "%s is no longer a verified domain of this workspace", clip(domain))
	}
	return s.signIn(ctx, c, subject, key, email, name, attrs, meta)
}

// verify is the one relying party's check of every upstream OpenID
// sign-in: the code exchanged at c's provider with the flow's PKCE
// verifier, the ID token verified (signature, iss, aud, exp) and its
// nonce compared with the flow's. The token is returned with a refusal
// once its subject is known (for the audit entry).
func (s *Service) verify(ctx context.Context, c *Connection, f *Flow, code string) (*oidc.IDToken, *claims, error) {
	p, err := s.provider(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.oauthConfig(c, p)
	if err != nil {
		return nil, nil, err
	}
	cctx := oidc.ClientContext(ctx, s.client)
	tok, err := cfg.Exchange(cctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		s.log.Info("sso code exchange failed", "connection", c.ID, "err", err)
		return nil, nil, errUpstream
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, nil, errUpstream
	}
	// The provider's keys are kept and read again for an unknown key at
	// most once per JWKSMinInterval (keySet), not on every token that
	// names one (go-oidc's RemoteKeySet): forged tokens cannot make us
	// hammer the provider.
	v, err := s.verifier(ctx, c, &oidc.Config{ClientID: c.ClientID, Now: s.Now})
	if err != nil {
		return nil, nil, err
	}
	idt, err := v.Verify(cctx, raw)
	if err != nil {
		s.log.Info("sso id token refused", "connection", c.ID, "err", err)
		return nil, nil, errUpstream
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return idt, nil, errUpstream
	}
	var cl claims
	if err := idt.Claims(&cl); err != nil {
		return idt, nil, errUpstream
	}
	if cl.Email == "" {
		if err := s.userInfo(cctx, p, tok, idt.Subject, &cl); err != nil {
			s.log.Info("sso userinfo refused", "connection", c.ID, "err", err)
			return idt, nil, errUpstream
		}
	}
	return idt, &cl, nil
}

// userInfo fills cl's address, whether it is verified, and a missing
// name from the provider's UserInfo endpoint: OpenID Connect Core §5.4
// lets a provider answer the email and profile scopes there only (as
// Gatehouse itself does) when it issues an access token. Its sub must be
// the ID token's (§5.3.2). No endpoint: cl stays as it is.
func (s *Service) userInfo(ctx context.Context, p *oidc.Provider, tok *oauth2.Token, subject string, cl *claims) error {
	if p.UserInfoEndpoint() == "" {
		return nil
	}
	ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return err
	}
	if ui.Subject != subject {
		return errors.New("userinfo names another subject")
	}
	var more claims
	if err := ui.Claims(&more); err != nil {
		return err
	}
	cl.Email, cl.EmailVerified = more.Email, more.EmailVerified
	if cl.Name == "" {
		cl.Name = more.Name
	}
	return nil
}

// signIn resolves the person of a verified upstream identity and opens
// their session: the account linked to the subject; else a new account
// (just-in-time, with the connection's default role); an existing
// account of the address is never linked silently (LinkRequired), and
// one whose address is unconfirmed is refused. The name and mapped
// teams follow attrs at every sign-in (applyAttributes).
func (s *Service) signIn(ctx context.Context, c *Connection, subject, key, email, name string, attrs attributes, meta gatehouse.SessionMeta) (*identity.SignIn, error) {
	userID, err := s.store.LinkedUser(ctx, c.ID, subject)
	if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
		return nil, gatehouse.Internal("find sso link", err)
	}
	if userID == "" {
		u, err := s.store.Identity().UserByEmail(ctx, key)
		switch {
		case errors.Is(err, gatehouse.ErrNotFound):
		case err != nil:
			return nil, gatehouse.Internal("find user", err)
		case !u.EmailVerified:
			return nil, gatehouse.Errorf(gatehouse.KindConflict,
				"an account with this address exists but its address was never confirmed; confirm it (or sign in with an emailed link) first, then use single sign-on")
		default:
			return nil, s.pendingLink(ctx, c, subject, u.ID)
		}
	}
	var out *identity.SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		in := identity.Proven{UserID: userID, Email: email, Name: name, OrgID: c.OrgID, Detail: map[string]any{"sso_connection_id": c.ID},
			Before: func(itx identity.Store, u *gatehouse.User, created bool) error {
				if err := s.join(ctx, itx, c, u.ID); err != nil {
					return err
				}
				if err := s.applyAttributes(ctx, itx, c, u, name, attrs); err != nil || !created {
					return err
				}
				// Provisioned here: linked, and at home in the workspace.
				if err := tx.Link(ctx, c.ID, subject, u.ID, s.Now()); err != nil {
					return gatehouse.Internal("link", err)
				}
				if err := tx.SetDefaultOrg(ctx, u.ID, c.OrgID); err != nil {
					return gatehouse.Internal("set default org", err)
				}
				u.DefaultOrgID = c.OrgID
				return nil
			}}
		var err error
		out, err = s.id.StartProvenSession(ctx, tx.Identity(), in, meta)
		return err
	})
	return out, err
}

// join makes userID a member of c's workspace with its default role
// unless they are one already.
func (s *Service) join(ctx context.Context, tx identity.Store, c *Connection, userID string) error {
	err := tx.AddMember(ctx, &workspace.Membership{OrgID: c.OrgID, UserID: userID, Role: c.DefaultRole, JoinedAt: s.Now()})
	if errors.Is(err, gatehouse.ErrConflict) {
		return nil
	}
	if err != nil {
		return gatehouse.Internal("sso join", err)
	}
	return s.ws.Audit(ctx, tx, c.OrgID, userID, "member.joined", "user", userID, map[string]any{"via": "sso", "sso_connection_id": c.ID, "role": c.DefaultRole})
}

// pendingLink records a link waiting for the account's proof.
func (s *Service) pendingLink(ctx context.Context, c *Connection, subject, userID string) error {
	secret := token.NewSecret("")
	if err := s.store.CreatePendingLink(ctx, &PendingLink{TokenHash: token.Hash(secret), ConnectionID: c.ID, Subject: subject, UserID: userID,
		ExpiresAt: s.Now().Add(LinkTTL)}); err != nil {
		return gatehouse.Internal("create pending link", err)
	}
	return &LinkRequired{Token: secret}
}

// proofMethods are the sign-ins that prove an account for a link.
var proofMethods = []string{gatehouse.ViaPassword, gatehouse.ViaPasskey, gatehouse.ViaMagicLink}

// ConfirmLink links the upstream identity of a pending link to the
// caller's account: the caller must have just signed in to that very
// account with a password, passkey or magic link.
func (s *Service) ConfirmLink(ctx context.Context, p *gatehouse.Principal, secret string) error {
	if !slices.Contains(proofMethods, p.Via) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "sign in with your password, a passkey or an emailed link to link single sign-on")
	}
	if err := s.id.RequireRecentAuth(ctx, p, "link single sign-on"); err != nil {
		return err
	}
	if secret == "" {
		return gatehouse.InvalidField("link_token", "link_token is required")
	}
	return s.store.Tx(ctx, func(tx Store) error {
		l, err := tx.UsePendingLink(ctx, token.Hash(secret), s.Now())
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && l.UserID != p.UserID) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "this link request expired, was used or is for another account")
		}
		if err != nil {
			return gatehouse.Internal("use pending link", err)
		}
		if sc, ok := s.social[l.ConnectionID]; ok {
			return s.confirmSocial(ctx, tx, sc, l)
		}
		c, err := tx.ConnectionByID(ctx, l.ConnectionID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errConnNotFound
		}
		if err != nil {
			return gatehouse.Internal("find sso connection", err)
		}
		if err := tx.Link(ctx, c.ID, l.Subject, p.UserID, s.Now()); errors.Is(err, gatehouse.ErrConflict) {
			return gatehouse.Errorf(gatehouse.KindConflict, "this identity is linked already")
		} else if err != nil {
			return gatehouse.Internal("link", err)
		}
		if err := s.join(ctx, tx.Identity(), c, p.UserID); err != nil {
			return err
		}
		return s.ws.Audit(ctx, tx, c.OrgID, p.UserID, "sso.linked", "sso_connection", c.ID, map[string]any{"subject": l.Subject})
	})
}

// auditOutcome writes the audit entry of a sign-in attempt through c.
func (s *Service) auditOutcome(ctx context.Context, c *Connection, si *identity.SignIn, subject string, err error) {
	meta := map[string]any{"subject": subject, "outcome": "signed_in"}
	actor := ""
	var lr *LinkRequired
	switch {
	case err == nil:
		actor = si.User.ID
		meta["user_id"] = si.User.ID
	case errors.As(err, &lr):
		meta["outcome"] = "link_required"
	default:
		meta["outcome"] = "refused"
		var ge *gatehouse.Error
		if errors.As(err, &ge) && ge.Kind != gatehouse.KindInternal {
			meta["reason"] = ge.Message
		}
	}
	if aerr := s.ws.Audit(ctx, s.store, c.OrgID, actor, "sso.sign_in", "sso_connection", c.ID, meta); aerr != nil {
		s.log.Error("audit sso sign-in", "connection", c.ID, "err", aerr)
	}
	if s.events == nil {
		return
	}
	attrs := []slog.Attr{slog.String("method", identity.MethodSSO), slog.String("sso_connection_id", c.ID)}
	if err == nil {
		s.events.Event(ctx, gatehouse.EventSignIn, append(attrs, slog.String("user_id", si.User.ID), slog.String("session_id", si.SessionID))...)
		return
	}
	reason, _ := meta["outcome"].(string)
	if r, ok := meta["reason"].(string); ok {
		reason = r
	}
	s.events.Event(ctx, gatehouse.EventSignInFailure, append(attrs, slog.String("reason", reason))...)
}

// Discovery is where an address signs in: its connection and the URL
// that starts the sign-in.
type Discovery struct {
	ConnectionID string
	Name         string
	StartURL     string
	Enforced     bool
}

// Discover is home-realm discovery: the connection serving email's
// domain, whoever asks, whether or not an account exists (the answer
// depends on the domain alone).
func (s *Service) Discover(ctx context.Context, email string) (*Discovery, error) {
	key, _, err := gatehouse.ParseEmail(email)
	if err != nil {
		return nil, err
	}
	c, err := s.store.ConnectionForDomain(ctx, key[strings.LastIndexByte(key, '@')+1:])
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errNoConnection
	}
	if err != nil {
		return nil, gatehouse.Internal("find sso connection", err)
	}
	return &Discovery{ConnectionID: c.ID, Name: c.Name, StartURL: s.base + "/v1/sso/start?connection=" + c.ID, Enforced: c.Enforce}, nil
}

// AllowSignIn implements identity.SSOGate: an address of a domain whose
// connection enforces SSO signs in through it only; an owner of that
// workspace keeps password sign-in (the break-glass path).
func (s *Service) AllowSignIn(ctx context.Context, method, userID, emailKey string) error {
	at := strings.LastIndexByte(emailKey, '@')
	if at < 0 {
		return nil
	}
	c, err := s.store.ConnectionForDomain(ctx, emailKey[at+1:])
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && !c.Enforce) {
		return nil
	}
	if err != nil {
		return gatehouse.Internal("find sso connection", err)
	}
	if method == identity.MethodPassword && userID != "" {
		if _, role, err := s.store.OrgRole(ctx, c.OrgID, userID); err == nil && role == workspace.RoleOwner {
			return nil
		}
	}
	return ErrSSORequired
}

// ErrSSORequired answers a password or magic-link sign-in of an address
// whose workspace enforces single sign-on.
var ErrSSORequired = gatehouse.Errorf(gatehouse.KindForbidden,
	"your organization requires signing in through its identity provider: use single sign-on (POST /v1/sso/discover)")
