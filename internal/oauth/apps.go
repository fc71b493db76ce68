package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/clientmeta"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Workspace applications as clients (issue 25 item 3): a client_id that
// starts with workspace.ClientIDPrefix names a live application of a team
// org, and the client is built from its row. Confidential applications
// authenticate at the token, revocation and introspection endpoints
// (authenticateClient) with a secret (client_secret_basic,
// client_secret_post) or a signed assertion (private_key_jwt, RFC 7523).

// The secret methods of token_endpoint_auth_method.
const (
	AuthClientSecretBasic = workspace.AuthClientSecretBasic
	AuthClientSecretPost  = workspace.AuthClientSecretPost
)

// Bounds of client assertions (RFC 7523).
const (
	// AssertionType is the client_assertion_type of a JWT assertion.
	AssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// MaxAssertionLife is how far in the future an assertion's exp may
	// be: its jti is remembered until then.
	MaxAssertionLife = 10 * time.Minute
	// assertionSkew is the clock difference allowed for nbf and iat.
	assertionSkew   = 30 * time.Second
	maxAssertionLen = 8 << 10
	maxJTI          = 256
	// jwksTTL is how long a fetched jwks_uri is used; a key it lacks
	// fetches it again, at most once per jwksRefetch.
	jwksTTL     = 5 * time.Minute
	jwksRefetch = 30 * time.Second
	jwksMaxURIs = 1000
)

// appClient is the client of application a: redirects its errors (an
// administrator of its workspace registered it), a code and refresh
// grant, the org, method and first-party flag of its row.
func appClient(a *workspace.Application) *Client {
	return &Client{ID: a.ClientID(), Name: a.ClientName, RedirectURIs: a.RedirectURIs,
		GrantTypes: []string{GrantAuthorizationCode, GrantRefreshToken}, CreatedAt: a.CreatedAt, RedirectsErrors: true,
		Scope: a.Scope, IDTokenAlg: a.IDTokenAlg, PostLogoutRedirectURIs: a.PostLogoutRedirectURIs,
		BackchannelLogoutURI: a.BackchannelLogoutURI, OrgID: a.OrgID, AuthMethod: a.AuthMethod, FirstParty: a.FirstParty, app: a}
}

// application resolves a workspace application's client_id.
func (s *Server) application(ctx context.Context, id string) (*Client, error) {
	a, err := workspace.LiveApplication(ctx, s.store.Identity(), id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, invalidClient("unknown client")
	}
	if err != nil {
		return nil, serverError(err)
	}
	return appClient(a), nil
}

// Confidential reports whether c authenticates at the token endpoint
// (a workspace application of a method other than none).
func (c *Client) Confidential() bool { return c.app != nil && c.AuthMethod != workspace.AuthNone }

// clientSecret checks the secret a confidential client presented by the
// method used against its registration.
func (s *Server) clientSecret(c *Client, method, secret string) error {
	switch {
	case c.AuthMethod == workspace.AuthPrivateKeyJWT:
		return invalidClient("this application authenticates with private_key_jwt (client_assertion)")
	case secret == "":
		return invalidClient("client authentication failed: this application authenticates with %s", c.AuthMethod)
	case method != c.AuthMethod:
		return invalidClient("client authentication failed: this application authenticates with %s", c.AuthMethod)
	case !c.app.SecretMatches(secret, s.clock()):
		return invalidClient("client authentication failed")
	}
	return nil
}

// errBadAssertion is the answer to every assertion that does not verify;
// the log has no more (the assertion is the client's own business).
var errBadAssertion = invalidClient("the client assertion is not valid")

// assertionClient authenticates a private_key_jwt client by its assertion
// (RFC 7523 §3): signed RS256 or ES256 by a key of the application's jwks
// or jwks_uri, iss and sub its client_id (and the same as a client_id
// sent beside it), aud the token endpoint, the issuer or the endpoint
// called, exp present and at most MaxAssertionLife away, jti present and
// never used before on any instance.
func (s *Server) assertionClient(r *http.Request, raw, formID string) (*Client, error) {
	if raw == "" || len(raw) > maxAssertionLen {
		return nil, errBadAssertion
	}
	tok, err := jwt.ParseSigned(raw, clientmeta.AssertionAlgs)
	if err != nil || len(tok.Headers) != 1 {
		return nil, errBadAssertion
	}
	var claims jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil || claims.Subject == "" {
		return nil, errBadAssertion
	}
	if formID != "" && formID != claims.Subject {
		return nil, invalidClient("client_id differs from the client assertion's subject")
	}
	if len(claims.Subject) > 64 || !gatehouse.CleanText(claims.Subject) {
		return nil, errBadAssertion
	}
	c, err := s.Client(r.Context(), claims.Subject, sessionMeta(r).IP)
	if err != nil {
		return nil, err
	}
	if c.app == nil || c.AuthMethod != workspace.AuthPrivateKeyJWT {
		return nil, invalidClient("this client does not authenticate with private_key_jwt")
	}
	h := tok.Headers[0]
	verified := false
	for refetched := false; !verified; refetched = true {
		keys, err := s.clientKeys(r.Context(), c.app, refetched)
		if err != nil {
			return nil, err
		}
		var got jwt.Claims
		for _, k := range keys {
			if (h.KeyID != "" && k.KeyID != h.KeyID) || clientmeta.KeyAlg(k) != h.Algorithm {
				continue
			}
			if tok.Claims(k.Key, &got) == nil {
				verified = true
				claims = got
				break
			}
		}
		if verified || refetched || c.app.JWKSURI == "" {
			break
		}
	}
	if !verified {
		return nil, errBadAssertion
	}
	now := s.clock()
	aud := []string{s.issuer, s.issuer + "/oauth/token", s.issuer + r.URL.Path}
	switch {
	case claims.Issuer != c.ID || claims.Subject != c.ID:
		return nil, errBadAssertion
	case !slices.ContainsFunc(aud, claims.Audience.Contains):
		return nil, errBadAssertion
	case claims.Expiry == nil || !now.Before(claims.Expiry.Time()) || claims.Expiry.Time().After(now.Add(MaxAssertionLife)):
		return nil, errBadAssertion
	case claims.NotBefore != nil && claims.NotBefore.Time().After(now.Add(assertionSkew)):
		return nil, errBadAssertion
	case claims.IssuedAt != nil && claims.IssuedAt.Time().After(now.Add(assertionSkew)):
		return nil, errBadAssertion
	case claims.ID == "" || len(claims.ID) > maxJTI || !gatehouse.CleanText(claims.ID):
		return nil, errBadAssertion
	}
	if err := s.store.UseAssertion(r.Context(), c.ID, claims.ID, claims.Expiry.Time(), now); errors.Is(err, gatehouse.ErrConflict) {
		return nil, invalidClient("the client assertion was used before")
	} else if err != nil {
		return nil, serverError(err)
	}
	return c, nil
}

// clientKeys are the verification keys of a private_key_jwt application:
// its inline jwks, or its jwks_uri's, fetched through the safe outbound
// client and cached jwksTTL (fresh asks for a fetch newer than
// jwksRefetch, for a key the cached set lacks).
func (s *Server) clientKeys(ctx context.Context, a *workspace.Application, fresh bool) ([]jose.JSONWebKey, error) {
	if a.JWKS != "" {
		keys, err := clientmeta.ParseJWKS([]byte(a.JWKS))
		if err != nil {
			return nil, errBadAssertion
		}
		return keys, nil
	}
	return s.jwks.get(ctx, a.JWKSURI, s.clock(), fresh)
}

// jwksCache fetches and keeps applications' jwks_uri documents.
type jwksCache struct {
	client *http.Client
	mu     sync.Mutex
	sets   map[string]jwksEntry
	s      *Server
}

type jwksEntry struct {
	keys    []jose.JSONWebKey
	fetched time.Time
}

var errJWKSFetch = invalidClient("the application's jwks_uri could not be fetched or holds no usable key")

func (j *jwksCache) get(ctx context.Context, uri string, now time.Time, fresh bool) ([]jose.JSONWebKey, error) {
	j.mu.Lock()
	e, ok := j.sets[uri]
	j.mu.Unlock()
	switch {
	case ok && e.keys == nil && now.Sub(e.fetched) < jwksRefetch:
		return nil, errJWKSFetch // a failed fetch is not tried again at once
	case ok && e.keys != nil && now.Sub(e.fetched) < jwksTTL && (!fresh || now.Sub(e.fetched) < jwksRefetch):
		return e.keys, nil
	}
	keys, err := j.fetch(ctx, uri)
	if err != nil {
		j.s.log.Warn("jwks_uri fetch", "uri", uri, "err", err)
		if ok && e.keys != nil && now.Sub(e.fetched) < jwksTTL {
			return e.keys, nil
		}
		j.put(uri, jwksEntry{fetched: now})
		return nil, errJWKSFetch
	}
	j.put(uri, jwksEntry{keys: keys, fetched: now})
	return keys, nil
}

func (j *jwksCache) put(uri string, e jwksEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.sets) >= jwksMaxURIs {
		clear(j.sets)
	}
	j.sets[uri] = e
}

func (j *jwksCache) fetch(ctx context.Context, uri string) ([]jose.JSONWebKey, error) {
	if err := clientmeta.JWKSURI(uri); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/jwk-set+json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, clientmeta.MaxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	return clientmeta.ParseJWKS(b)
}

// AppMember is the workspace an authorization request of a workspace
// application is made in: the application's own, when userID is a member
// of it; a refusal redirecting access_denied when not, prompt=none or
// not (the one answer to a non-member, as without prompt=none: signing in
// again would not make them a member). A member's prompt=none request
// goes on without a page for a first-party application, and is refused
// with consent_required by redirect for any other. For other clients it
// is "".
func (s *Server) AppMember(ctx context.Context, a *AuthRequest, userID string) (string, error) {
	if a.Client.OrgID == "" {
		return "", nil
	}
	_, _, err := workspace.LiveMember(ctx, s.store.Identity(), a.Client.OrgID, userID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		desc := "this application signs in members of its workspace only"
		return "", &Refusal{RedirectTo: s.errorRedirect(a, "access_denied", desc), Message: desc}
	}
	if err != nil {
		return "", err
	}
	if a.Prompts(PromptNone) && !a.Client.FirstParty {
		desc := "the user must approve the request on the consent page"
		return "", &Refusal{RedirectTo: s.errorRedirect(a, "consent_required", desc), Message: desc}
	}
	return a.Client.OrgID, nil
}

// InteractionRequired is where a prompt=none request that cannot be
// granted without a page (a refusal the consent page would explain) sends
// the browser: the client's redirect URI with interaction_required.
func (s *Server) InteractionRequired(a *AuthRequest, desc string) string {
	return s.errorRedirect(a, "interaction_required", desc)
}

// unescapeBasic decodes a client_id or secret of HTTP Basic (RFC 6749
// §2.3.1: form-urlencoded).
func unescapeBasic(s string) (string, error) { return url.QueryUnescape(s) }
