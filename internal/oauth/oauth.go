// Package oauth is Gatehouse's OAuth 2.1 authorization server and OpenID
// provider. Its clients are public ones that register themselves (MCP
// clients, command-line tools: RFC 7591 and client ID metadata documents)
// and the workspace applications an administrator registers, public or
// confidential (apps.go; client_secret_basic, client_secret_post,
// private_key_jwt). It serves discovery (RFC 8414 and OpenID Connect
// Discovery, one document), authorization codes with PKCE S256, the token
// endpoint with one type per grant, device authorization (RFC 8628),
// revocation (RFC 7009), introspection for resource servers (RFC 7662),
// protected resource metadata (RFC 9728), ID tokens and UserInfo
// (oidc.go), and RP-initiated and back-channel logout (logout.go,
// backchannel.go).
//
// The hosted pages (sign-in, consent, device entry, logout) live in
// internal/pages and call this package; grants and the sessions issued
// under them are identity's.
package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/cache"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Lifetimes and bounds of the authorization server.
const (
	CodeTTL         = 60 * time.Second
	DeviceCodeTTL   = 10 * time.Minute
	DefaultInterval = 5 * time.Second
	MaxRedirectURIs = 20
	MaxParam        = 2048 // bytes of any one request parameter
)

// Grant type identifiers.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

// Store persists clients, authorization codes and device codes. Like
// identity.Store it translates driver errors into gatehouse.ErrNotFound and
// gatehouse.ErrConflict.
type Store interface {
	// Tx runs fn in a read-write transaction and commits when fn returns nil.
	Tx(ctx context.Context, fn func(tx Store) error) error
	// Identity returns the identity store on the same connection (inside
	// Tx, the same transaction), so that a code is spent in the
	// transaction that opens its session.
	Identity() identity.Store

	CreateClient(ctx context.Context, c *Client) error
	ClientByID(ctx context.Context, id string) (*Client, error)

	CreateCode(ctx context.Context, c *Code) error
	// UseCode marks an unused, unexpired code used and returns it;
	// ErrNotFound when no such code exists.
	UseCode(ctx context.Context, hash string, at time.Time) (*Code, error)
	CodeByHash(ctx context.Context, hash string) (*Code, error)

	// CreateDeviceCode inserts d; ErrConflict when its user code is taken.
	CreateDeviceCode(ctx context.Context, d *DeviceCode) error
	DeviceByUserHash(ctx context.Context, userHash string) (*DeviceCode, error)
	// DecideDevice moves a pending, unexpired device code to status
	// (approved or denied); ErrNotFound when there is none.
	DecideDevice(ctx context.Context, userHash, status, userID, grantID string, at time.Time) error
	// PollDevice records a poll of the device code. slow is true (and the
	// interval grows by 5 s) when the previous poll was less than the
	// interval ago.
	PollDevice(ctx context.Context, deviceHash string, at time.Time) (d *DeviceCode, slow bool, err error)
	// UseDevice moves an approved device code to used; ErrNotFound when it
	// is not approved (any more).
	UseDevice(ctx context.Context, deviceHash string) (*DeviceCode, error)

	// CreateOIDCGrant records how the person approving an openid grant
	// had authenticated.
	CreateOIDCGrant(ctx context.Context, g *OIDCGrant) error
	// OIDCGrant returns it; ErrNotFound for a grant without openid.
	OIDCGrant(ctx context.Context, grantID string) (*OIDCGrant, error)
	// UseAssertion records the jti of a client assertion of clientID,
	// remembered until exp; ErrConflict when it was recorded before.
	UseAssertion(ctx context.Context, clientID, jti string, exp, now time.Time) error
}

// OIDCGrant is what the ID tokens of an openid grant say about the
// authentication behind it: the approving browser session's sign-in
// time, methods and level. A grant without openid has none.
type OIDCGrant struct {
	GrantID  string
	AuthTime time.Time
	AMR      []string
	ACR      string
}

// Client is a registered public client.
type Client struct {
	ID           string
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	// Metadata is the registered metadata as answered to the client.
	Metadata  []byte
	CreatedAt time.Time
	// RedirectsErrors lets authorization errors (prompt=none's among them)
	// be redirected to the client before the user has signed in. A
	// dynamically registered client never does: anyone can register one
	// with any redirect URI, so Gatehouse would be an open redirector (RFC
	// 9700 §4.11.2); it shows an error page instead. A client ID metadata
	// document client does: its redirect URIs are published under the
	// https origin its client_id names. Workspace applications do, vouched
	// for by the workspace's administrators.
	RedirectsErrors bool
	// Scope is the registered scope (space-separated); "" allows any.
	Scope string
	// IDTokenAlg is id_token_signed_response_alg; "" means RS256.
	IDTokenAlg string
	// PostLogoutRedirectURIs are where RP-initiated logout may return
	// (exact match).
	PostLogoutRedirectURIs []string
	// BackchannelLogoutURI receives a logout token when a session of this
	// client ends; "" for none.
	BackchannelLogoutURI string
	// OrgID is the workspace of a workspace application ("" for other
	// clients): it signs in that workspace's members only, and its grants
	// are made in it.
	OrgID string
	// AuthMethod is token_endpoint_auth_method: none for every client but
	// confidential workspace applications.
	AuthMethod string
	// FirstParty skips the consent page (workspace applications that
	// say so).
	FirstParty bool
	// app is the row of a workspace application; nil for other clients.
	app *workspace.Application
}

// DisplayName is the client's name, else its id.
func (c *Client) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

func (c *Client) allows(grant string) bool {
	has := func(g string) bool {
		for _, x := range c.GrantTypes {
			if x == g {
				return true
			}
		}
		return false
	}
	// Refresh tokens come with both code and device grants.
	return has(grant) || grant == GrantRefreshToken && (has(GrantAuthorizationCode) || has(GrantDeviceCode))
}

// Code is an authorization code, stored by hash.
type Code struct {
	Hash          string
	GrantID       string
	ClientID      string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	Nonce         string // OpenID Connect: into the exchange's ID token
	CreatedAt     time.Time
	ExpiresAt     time.Time
	UsedAt        *time.Time
}

// Device code states.
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
	DeviceUsed     = "used"
)

// DeviceCode is a device authorization (RFC 8628), stored by the hashes of
// its device code and user code.
type DeviceCode struct {
	DeviceHash string
	UserHash   string
	ClientID   string
	ClientName string
	Scope      string
	Resource   string
	Interval   time.Duration
	Status     string
	UserID     string
	GrantID    string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastPollAt *time.Time
}

// Config wires a Server.
type Config struct {
	Service *identity.Service
	Store   Store
	Logger  *slog.Logger
	// Issuer is GATEHOUSE_BASE_URL, exactly: discovery's issuer and the
	// base of every endpoint.
	Issuer string
	// APIURL is GATEHOUSE_API_URL, the protected resource of the tool APIs.
	APIURL string
	// MCPURL is GATEHOUSE_MCP_URL, the MCP server: a resource of its own
	// (RFC 8707, RFC 9728) whose metadata is at
	// {api_url}/.well-known/oauth-protected-resource/mcp; "" for none.
	MCPURL string
	Now    func() time.Time // nil: the service clock
	// DeviceInterval is the polling interval given to devices; 0: 5 s.
	DeviceInterval time.Duration
	// MetadataClient fetches client ID metadata documents; nil: a client
	// with a 5 s timeout that refuses private addresses unless
	// AllowPrivate.
	MetadataClient *http.Client
	AllowPrivate   bool
	// RootCAs, when set, are the CAs trusted when fetching metadata
	// documents (GATEHOUSE_WEBHOOK_CA_FILE with the system roots).
	RootCAs *x509.CertPool
	// RateLimit (GATEHOUSE_RATE_LIMIT) limits metadata document fetches per
	// requester IP and per document host.
	RateLimit bool
	// Events records the token endpoint's sign-ins (the kernel's security
	// log); nil: none.
	Events identity.Events
	// Keys signs ID tokens and checks id_token_hint (authorize and
	// RP-initiated logout); nil: no OpenID Connect (openid is then ignored).
	Keys keys.Signer
	// LogoutSigner signs back-channel logout tokens (the key ring, which
	// sets their typ); nil: none are sent.
	LogoutSigner LogoutSigner
	// LogoutAllowPrivate lets logout tokens go to private addresses
	// (GATEHOUSE_WEBHOOK_ALLOW_PRIVATE, as for metadata documents);
	// RootCAs are trusted for them too.
	LogoutAllowPrivate bool
	// Assertions accepts and issues ID-JAGs under the workspaces'
	// policies (internal/sso); nil: the JWT-bearer and token-exchange
	// grants are unsupported. The ID-JAGs issued are signed by
	// LogoutSigner, the key ring's typed signer.
	Assertions Assertions
}

// Server is the authorization server.
type Server struct {
	svc      *identity.Service
	store    Store
	log      *slog.Logger
	events   identity.Events
	issuer   string
	apiURL   string
	mcpURL   string
	now      func() time.Time
	interval time.Duration
	cimd     *metadataDocuments
	keys     keys.Signer
	jwks     *jwksCache
	// Logout (logout.go, backchannel.go).
	logoutSigner LogoutSigner
	logoutHTTP   *http.Client
	// assertions are the ID-JAG grants' policies (idjag.go).
	assertions Assertions
	// callers keeps the workspace key tokens that called introspection
	// (keyCaller).
	callers cache.Short[[sha256.Size]byte, *gatehouse.Principal]
}

// New returns a Server.
func New(c Config) *Server {
	s := &Server{svc: c.Service, store: c.Store, log: c.Logger, events: c.Events, issuer: strings.TrimRight(c.Issuer, "/"),
		apiURL: strings.TrimRight(c.APIURL, "/"), mcpURL: strings.TrimRight(c.MCPURL, "/"), now: c.Now, interval: c.DeviceInterval, keys: c.Keys}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = c.Service.Now
	}
	if s.apiURL == "" {
		s.apiURL = s.issuer
	}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	s.logoutSigner, s.logoutHTTP = c.LogoutSigner, logoutClient(c.LogoutAllowPrivate, c.RootCAs)
	s.assertions = c.Assertions
	s.cimd = newMetadataDocuments(c.MetadataClient, c.AllowPrivate, c.RootCAs, s.log)
	s.jwks = &jwksCache{client: s.cimd.client, sets: map[string]jwksEntry{}, s: s}
	if c.RateLimit {
		s.cimd.limit(s.now)
	}
	return s
}

// Issuer returns the issuer identifier (GATEHOUSE_BASE_URL).
func (s *Server) Issuer() string { return s.issuer }

// APIURL returns the tool APIs' base URL.
func (s *Server) APIURL() string { return s.apiURL }

func (s *Server) clock() time.Time { return s.now().UTC() }

// s256 is the PKCE S256 transform of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func hash(secret string) string { return token.Hash(secret) }

// validVerifier reports whether v is a PKCE code verifier (RFC 7636 §4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// validChallenge reports whether c looks like an S256 challenge: 43
// base64url characters.
func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil
}
