// Package sso is enterprise single sign-on per workspace over OpenID
// Connect and SAML 2.0 (issue 27): a team org's connections to its
// identity provider, the sign-in through them (authorization code with
// PKCE, state bound to the browser, nonce; or a SAML AuthnRequest, its
// RelayState bound to the browser, the signed response checked at our
// ACS, assertion ids single use), home-realm discovery and the enforce-SSO
// rule. It
// sits above identity and workspace, as oauth does: workspace's access
// checks and audit, identity's one seam StartProvenSession.
package sso

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Connection is a team org's identity provider: OpenID Connect, or SAML
// 2.0 when SAML is set (Protocol says which).
type Connection struct {
	ID       string
	OrgID    string
	Name     string
	Protocol string // ProtocolOIDC or ProtocolSAML
	// Issuer is the OpenID issuer, or the SAML identity provider's entity id.
	Issuer   string
	ClientID string
	// SealedSecret is the client secret sealed by the service's box,
	// bound to the connection id; never answered.
	SealedSecret []byte
	Scopes       []string
	// DefaultRole is the role of a person provisioned at first sign-in
	// (never owner).
	DefaultRole string
	// Enforce makes this connection the only way in for its domains'
	// addresses: password and magic links are refused (owners keep
	// password sign-in: the break-glass path).
	Enforce bool
	Domains []string
	// SAML is the identity provider of a SAML connection; nil for OIDC.
	SAML *SAMLConfig
	// SealedSPKeys are a SAML connection's own keys (ours as its service
	// provider), sealed by the service's box bound to the connection id;
	// nil until made. Only SetSAMLKeys changes them.
	SealedSPKeys []byte
	// Mapping is what sign-ins read beyond the address (name, groups
	// to teams).
	Mapping   AttributeMapping
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Flow is a sign-in under way, stored by the hashes of its state and of
// the browser cookie it is bound to.
type Flow struct {
	StateHash    string
	ConnectionID string
	BrowserHash  string
	Nonce        string
	Verifier     string
	Next         string
	ExpiresAt    time.Time
}

// PendingLink is an upstream identity waiting for the person to prove
// the existing account of its address.
type PendingLink struct {
	TokenHash    string
	ConnectionID string
	Subject      string
	UserID       string
	ExpiresAt    time.Time
}

// Store is what sso reads and writes: its own tables, and through
// workspace.Tables and Identity the tables its checks, audit entries and
// sign-ins need, on the same connection or transaction.
type Store interface {
	workspace.Tables
	Tx(ctx context.Context, fn func(tx Store) error) error
	// Identity is the identity store on the same connection or transaction.
	Identity() identity.Store

	CreateConnection(ctx context.Context, c *Connection) error
	// ConnectionByID returns a connection; ErrNotFound.
	ConnectionByID(ctx context.Context, id string) (*Connection, error)
	ListConnections(ctx context.Context, orgID string) ([]Connection, error)
	UpdateConnection(ctx context.Context, c *Connection) error
	DeleteConnection(ctx context.Context, id string) error
	// BindDomains makes domains the ones connection id serves;
	// ErrConflict when another connection serves one of them.
	BindDomains(ctx context.Context, id string, domains []string) error
	// ConnectionForDomain is the connection serving domain while its
	// workspace has it verified; ErrNotFound.
	ConnectionForDomain(ctx context.Context, domain string) (*Connection, error)
	// EndSessions revokes the sessions of the accounts whose addresses
	// are in domains, except those opened through SSO and those of
	// owners of org orgID.
	EndSessions(ctx context.Context, orgID string, domains []string, at time.Time) error

	CreateFlow(ctx context.Context, f *Flow) error
	// UseFlow deletes and returns the unexpired flow of stateHash;
	// ErrNotFound when there is none (used, expired or never made).
	UseFlow(ctx context.Context, stateHash string, now time.Time) (*Flow, error)

	// LinkedUser is the account linked to subject at connection id; ErrNotFound.
	LinkedUser(ctx context.Context, id, subject string) (string, error)
	// Link links subject at connection id to userID; ErrConflict when linked.
	Link(ctx context.Context, id, subject, userID string, at time.Time) error
	CreatePendingLink(ctx context.Context, p *PendingLink) error
	// UsePendingLink deletes and returns the unexpired pending link of
	// tokenHash; ErrNotFound.
	UsePendingLink(ctx context.Context, tokenHash string, now time.Time) (*PendingLink, error)

	AssertionStore
	SPKeyStore
	IDJAGStore
	Identities
	MetadataStore
}

// Identity is what sso asks of identity.
type Identity interface {
	RequireRecentAuth(ctx context.Context, p *gatehouse.Principal, action string) error
	StartProvenSession(ctx context.Context, st identity.Store, in identity.Proven, meta gatehouse.SessionMeta) (*identity.SignIn, error)
}

// Config builds a Service.
type Config struct {
	Store     Store
	Workspace *workspace.Service
	Identity  Identity
	// Secrets seals the client secrets (seal.New(master, "sso")).
	Secrets *seal.Box
	// BaseURL is the issuer of this service: the callback is under it.
	BaseURL string
	Logger  *slog.Logger
	Now     func() time.Time // nil: time.Now
	// AllowPrivate lets issuers be reached on private addresses and over
	// plain http (development and tests); RootCAs are trusted (nil: the
	// system's).
	AllowPrivate bool
	RootCAs      *x509.CertPool
	// Events records SSO sign-ins and their refusals; nil: none.
	Events identity.Events
	// Social are the instance's upstream OpenID providers (social
	// sign-in), checked by SocialProvider.Check.
	Social []SocialProvider
}

// Service carries out SSO.
type Service struct {
	store   Store
	ws      *workspace.Service
	id      Identity
	secrets *seal.Box
	base    string
	log     *slog.Logger
	now     func() time.Time
	client  *http.Client
	private bool
	events  identity.Events

	mu        sync.Mutex
	providers map[string]cachedProvider // by connection id
	spKeys    map[string]spCached       // by connection id
	idpCerts  map[string]idpCached      // by connection id
	// keyMu makes one SAML key at a time (makeSPKeys).
	keyMu sync.Mutex

	// social are the social providers as connections, by their id
	// ("social:" and the name); socialList in the configured order.
	social     map[string]*Connection
	socialList []Provider
}

// New returns a Service; its zero dependencies are filled.
func New(c Config) *Service {
	s := &Service{store: c.Store, ws: c.Workspace, id: c.Identity, secrets: c.Secrets, base: strings.TrimRight(c.BaseURL, "/"),
		log: c.Logger, now: c.Now, private: c.AllowPrivate, events: c.Events,
		providers: map[string]cachedProvider{}, spKeys: map[string]spCached{}, idpCerts: map[string]idpCached{}}
	if s.now == nil {
		s.now = time.Now
	}
	s.addSocial(c.Social)
	if s.log == nil {
		s.log = slog.Default()
	}
	s.client = &http.Client{Timeout: 10 * time.Second,
		Transport:     outbound.LimitBodies(outbound.Transport(nil, c.AllowPrivate, c.RootCAs, 5*time.Second), MaxProviderBody),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return s
}

// MaxProviderBody bounds every answer of an identity provider we read
// (discovery document, key set, token answer): a provider cannot make us
// buffer without bound.
const MaxProviderBody = 1 << 20

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now().UTC() }

// CallbackURL is the redirect URI to register at the identity provider.
func (s *Service) CallbackURL() string { return s.base + "/v1/sso/callback" }
