// Package accounts is the domain of Gatehouse: users, sessions, keys, orgs,
// members, invitations, teams, audit and domains, with the rules over them.
// It talks to the database only through Store.
package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/token"
)

// Lifetimes fixed by the spec (section 8).
const (
	AccessTTL        = time.Hour
	RefreshTTL       = 30 * 24 * time.Hour
	MagicLinkTTL     = 15 * time.Minute
	VerifyEmailTTL   = 24 * time.Hour
	RefreshReuseSkew = 10 * time.Second // a rotated token presented later than this is theft
)

// Input bounds decided in docs/decisions.md.
const (
	MinPassword = 8
	MaxPassword = 1024 // bytes; bounds hashing work
	MaxName     = 200
)

// Mailer sends one plain-text email.
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// Config wires a Service.
type Config struct {
	Store     Store
	Signer    *token.Signer
	Hasher    *password.Hasher
	Mailer    Mailer
	Resolver  TXTResolver // DNS for domain verification
	Logger    *slog.Logger
	Now       func() time.Time // nil: time.Now
	WebURL    string           // base of links in emails
	MobileURL string           // base of magic links requested with client=mobile
	// NoMailLimits turns off the daily invitation mail limits; the zero
	// value keeps them on (GATEHOUSE_MAIL_LIMIT=off sets it).
	NoMailLimits bool
	// NoLockout turns off the failed-password lockout (lockout.go); the
	// zero value keeps it on (GATEHOUSE_RATE_LIMIT=off sets it).
	NoLockout bool
}

// Service carries out every accounts operation.
type Service struct {
	store     Store
	signer    *token.Signer
	hasher    *password.Hasher
	mailer    Mailer
	resolver  TXTResolver
	log       *slog.Logger
	now       func() time.Time
	webURL    string
	mobileURL string
	mail      sync.WaitGroup
	users     shortCache[string, User]
	// members holds a tool-API token's live standing in its org (nil: it
	// may act) for cacheTTL, keyed by subject and org.
	members      shortCache[memberKey, error]
	noMailLimits bool
	lockout      *lockout // nil: off
}

// New returns a Service.
func New(c Config) *Service {
	s := &Service{store: c.Store, signer: c.Signer, hasher: c.Hasher, mailer: c.Mailer, resolver: c.Resolver, log: c.Logger, now: c.Now,
		webURL: strings.TrimRight(c.WebURL, "/"), mobileURL: strings.TrimRight(c.MobileURL, "/"), noMailLimits: c.NoMailLimits}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.mobileURL == "" {
		s.mobileURL = s.webURL
	}
	if !c.NoLockout {
		s.lockout = newLockout(s.now)
	}
	return s
}

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now().UTC() }

// Wait blocks until every queued email has been handed to the mailer.
func (s *Service) Wait() { s.mail.Wait() }

// Health reports whether the database answers.
func (s *Service) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return s.store.Ping(ctx)
}

// sendMail hands a message to the mailer in the background: mail is best
// effort, never blocks the request and never reaches the response.
func (s *Service) sendMail(to, subject, text string) {
	s.mail.Add(1)
	go func() {
		defer s.mail.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.mailer.Send(ctx, to, subject, text); err != nil {
			s.log.Warn("mail not sent", "subject", subject, "err", err)
		}
	}()
}

func checkPassword(field, pw string) error {
	if pw == "" {
		return gatehouse.Invalid("%s is required", field)
	}
	if utf8.RuneCountInString(pw) < MinPassword {
		return gatehouse.Invalid("%s must be at least %d characters", field, MinPassword)
	}
	if len(pw) > MaxPassword {
		return gatehouse.Invalid("%s must be at most %d bytes", field, MaxPassword)
	}
	return nil
}

// audit writes one audit entry of the identity tool through st.
func (s *Service) audit(ctx context.Context, st Store, orgID, actorID, action, targetType, targetID string, meta map[string]any) error {
	m := "{}"
	if len(meta) > 0 {
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		m = string(b)
	}
	return st.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: orgID, Tool: "identity", Action: "identity." + action,
		ActorID: actorID, TargetType: targetType, TargetID: targetID, Meta: m, At: s.Now()})
}

// enabledTools lists the tools enabled in org, in canonical order.
func (s *Service) enabledTools(ctx context.Context, st Store, o *Org) ([]string, error) {
	states := o.ToolStates
	if states == nil {
		var err error
		if states, err = st.ToolStates(ctx, o.ID); err != nil {
			return nil, err
		}
	}
	tools := make([]string, 0, len(Tools))
	for _, t := range Tools {
		if toolOn(states, t) {
			tools = append(tools, t)
		}
	}
	return tools, nil
}

// toolOn applies gatehouse.ToolOn to tool, given an org's switches set
// explicitly (ToolStates).
func toolOn(states map[string]bool, tool string) bool {
	if on, set := states[tool]; set {
		return gatehouse.ToolOn(&on)
	}
	return gatehouse.ToolOn(nil)
}

func (s *Service) orgContext(ctx context.Context, st Store, o *Org, role string) (*OrgContext, error) {
	tools, err := s.enabledTools(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return &OrgContext{ID: o.ID, Name: o.Name, Slug: o.Slug, Kind: o.Kind, Role: role, Tools: tools}, nil
}

// mint issues an access token for user scoped to oc; resources (RFC 8707,
// OAuth grants) join "gatehouse" in its audience.
func (s *Service) mint(userID, sessionID, via string, oc *OrgContext, ttl time.Duration, resources ...string) (string, time.Time, error) {
	c := token.Claims{SessionID: sessionID, Via: via, Org: token.OrgClaim{ID: oc.ID, Role: oc.Role, Tools: oc.Tools}}
	c.Audience = resources
	return s.signer.Issue(c, userID, s.Now(), ttl)
}

// Authenticate verifies a bearer access token and returns its principal.
func (s *Service) Authenticate(raw string) (*gatehouse.Principal, error) {
	c, err := s.signer.Verify(raw)
	if err != nil {
		return nil, &gatehouse.Error{Kind: gatehouse.KindUnauthorized, Message: "invalid or expired access token", Err: err}
	}
	p := &gatehouse.Principal{UserID: c.Subject, SessionID: c.SessionID, OrgID: c.Org.ID, Role: c.Org.Role,
		Tools: c.Org.Tools, Via: c.Via, TokenID: c.ID}
	if c.ExpiresAt != nil {
		p.ExpiresAt = c.ExpiresAt.Time
	}
	return p, nil
}

var (
	errNoAccount = gatehouse.Errorf(gatehouse.KindUnauthorized, "this account no longer exists")
	errNoPerson  = gatehouse.Errorf(gatehouse.KindForbidden, "an org API key acts for its workspace, not for a person; this operation needs a user's token")
)

// caller reads the user behind a token through st; a deleted account's
// token is no longer valid, and an org key's (whose subject is the key) is
// refused: there is no person behind it.
func caller(ctx context.Context, st Store, userID string) (*User, error) {
	u, err := st.UserByID(ctx, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		if k, kerr := st.APIKeyByID(ctx, userID); kerr == nil && k.Kind == KeyOrg {
			return nil, errNoPerson
		}
		return nil, errNoAccount
	}
	if err != nil {
		return nil, internal("find user", err)
	}
	return u, nil
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
