package sso

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The accepting side of identity assertion grants: an ID-JAG
// (draft-ietf-oauth-identity-assertion-authz-grant, as MCP's
// Enterprise-Managed Authorization profiles it) that the identity
// provider of a workspace's OpenID Connect connection issued for a client
// registered here, sent to the token endpoint with the RFC 7523
// JWT-bearer grant. internal/oauth authenticates the client and issues
// the token; this file decides whether the assertion holds and whom it
// names.

// IDJAGType is the typ header of an ID-JAG.
const IDJAGType = "oauth-id-jag+jwt"

// Bounds of an accepted ID-JAG.
const (
	// IDJAGSkew is the clock difference allowed with the identity
	// provider on exp and iat.
	IDJAGSkew = 30 * time.Second
	// IDJAGMaxLifetime is the longest exp - iat accepted: the draft's
	// assertions live minutes; a longer one is refused.
	IDJAGMaxLifetime = 10 * time.Minute
	maxAssertion     = 16 << 10
	maxJTI           = 256
)

// idjagAlgs are the signature algorithms an ID-JAG may use.
var idjagAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.ES256, jose.ES384, jose.EdDSA}

// idjagClaims are the claims of an ID-JAG (the draft's section 3.1).
type idjagClaims struct {
	Issuer        string           `json:"iss"`
	Subject       string           `json:"sub"`
	Audience      jwt.Audience     `json:"aud"`
	ClientID      string           `json:"client_id"`
	Resource      jwt.Audience     `json:"resource"` // a string or an array, as aud
	Scope         string           `json:"scope"`
	JTI           string           `json:"jti"`
	Expiry        *jwt.NumericDate `json:"exp"`
	IssuedAt      *jwt.NumericDate `json:"iat"`
	Email         string           `json:"email"`
	EmailVerified *bool            `json:"email_verified"`
}

// refusal is an ID-JAG refused: invalid_grant unless field says the
// resource (invalid_target) or the scope (invalid_scope).
func refusal(field, format string, args ...any) error {
	if field == "" {
		return gatehouse.Errorf(gatehouse.KindUnauthorized, format, args...)
	}
	return gatehouse.InvalidField(field, format, args...)
}

var errIDJAG = refusal("", "the assertion is not a valid identity assertion for this server")

// candidate is a connection whose workspace accepts its provider's
// ID-JAGs.
type candidate struct {
	c   *Connection
	pol *IDJAGPolicy
}

// AcceptIDJAG checks an ID-JAG that client clientID presents and has
// open start the access it vouches for: its signature by a key in the
// JWK Set of the connection's provider, typ, iss (the connection's
// issuer), aud (this service's issuer), client_id (the caller), exp
// (IDJAGSkew, lifetime at most IDJAGMaxLifetime), resource and scope
// within the workspace's policy (the scope narrowed to it, at least one
// tool scope left), the subject a member of the workspace (linked at the
// connection, or an address in its bound domains). Its jti is spent, once
// on every instance, in the one write transaction in which open runs, so
// an access is started exactly when its assertion is spent. Refusals
// (open's among them) are audited in the workspace when one was found.
func (s *Service) AcceptIDJAG(ctx context.Context, raw, clientID string, open identity.OpenAsserted) (*identity.SignIn, error) {
	var cand *candidate
	si, err := s.acceptIDJAG(ctx, raw, clientID, open, &cand)
	if err != nil && cand != nil {
		reason := "refused"
		var e *gatehouse.Error
		if errors.As(err, &e) {
			reason = e.Message
		}
		if aerr := s.ws.Audit(ctx, s.store, cand.c.OrgID, "", "sso.idjag_refused", "sso_connection", cand.c.ID,
			map[string]any{"client_id": clientID, "reason": reason}); aerr != nil {
			s.log.Error("audit id-jag refusal", "err", aerr)
		}
	}
	return si, err
}

func (s *Service) acceptIDJAG(ctx context.Context, raw, clientID string, open identity.OpenAsserted, found **candidate) (*identity.SignIn, error) {
	if raw == "" || len(raw) > maxAssertion {
		return nil, errIDJAG
	}
	// Parsed once: the claims are read from the payload before the
	// signature is checked, and that same payload is what the signature
	// is then verified over (keySet.verify), so they need no second read.
	jws, err := jose.ParseSignedCompact(raw, idjagAlgs)
	if err != nil || len(jws.Signatures) != 1 || !isIDJAGType(jws.Signatures[0].Header.ExtraHeaders[jose.HeaderType]) {
		return nil, refusal("", "the assertion must be a signed JWT of type %s", IDJAGType)
	}
	var cl idjagClaims
	if err := josejson.Unmarshal(jws.UnsafePayloadWithoutVerification(), &cl); err != nil || cl.Issuer == "" {
		return nil, errIDJAG
	}
	cands, err := s.candidates(ctx, cl.Issuer)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, refusal("", "no workspace accepts identity assertions from this issuer")
	}
	*found = &cands[0]
	// The claims are checked before the signature: a forged assertion for
	// no client or audience of ours never makes us read the provider's
	// key set again.
	if err := s.checkIDJAG(&cl, clientID); err != nil {
		return nil, err
	}
	// The signature: an algorithm the provider announces, by a key of its
	// JWK Set (read again for a key it does not hold, at most once per
	// JWKSMinInterval); iss is the connection's issuer exactly.
	ks, err := s.keySet(ctx, cands[0].c)
	if err != nil {
		return nil, err
	}
	if !ks.allows(jws.Signatures[0].Header.Algorithm) || cl.Issuer != cands[0].c.Issuer {
		return nil, refusal("", "the assertion's signature or issuer does not verify")
	}
	if _, err := ks.verify(ctx, jws); err != nil {
		return nil, refusal("", "the assertion's signature or issuer does not verify")
	}
	// Membership is checked in the transaction that spends the assertion
	// (StartAssertedSession); read before it too only to choose among
	// several workspaces whose connections share the issuer.
	var a *identity.Asserted
	for i := range cands {
		*found = &cands[i]
		if a, err = s.mapIDJAG(ctx, &cands[i], &cl, clientID, len(cands) > 1); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	until := cl.Expiry.Time().Add(IDJAGSkew)
	var si *identity.SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.RememberAssertion(ctx, "idjag:"+cl.Issuer, cl.JTI, until, s.Now()); errors.Is(err, gatehouse.ErrConflict) {
			return refusal("", "the assertion was already used")
		} else if err != nil {
			return gatehouse.Internal("remember id-jag", err)
		}
		var err error
		if si, err = open(tx.Identity(), a); errors.Is(err, identity.ErrAssertedGone) {
			return errNotMember
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return si, nil
}

// isIDJAGType reports whether a typ header names an ID-JAG (RFC 7515
// §4.1.9: the media type, its "application/" prefix optional).
func isIDJAGType(v any) bool {
	t, _ := v.(string)
	t = strings.ToLower(t)
	return t == IDJAGType || t == "application/"+IDJAGType
}

// candidates are the OpenID Connect connections of issuer whose
// workspace's policy accepts their ID-JAGs.
func (s *Service) candidates(ctx context.Context, issuer string) ([]candidate, error) {
	cs, err := s.store.OIDCConnectionsByIssuer(ctx, issuer)
	if err != nil {
		return nil, gatehouse.Internal("find connections of issuer", err)
	}
	var out []candidate
	for i := range cs {
		pol, err := policyOf(ctx, s.store, cs[i].OrgID)
		if err != nil {
			return nil, err
		}
		if slices.Contains(pol.Accept.Connections, cs[i].ID) {
			out = append(out, candidate{c: &cs[i], pol: pol})
		}
	}
	return out, nil
}

// checkIDJAG checks the claims that do not depend on the workspace.
func (s *Service) checkIDJAG(cl *idjagClaims, clientID string) error {
	now := s.Now()
	switch {
	case !slices.Contains(cl.Audience, s.base):
		return refusal("", "the assertion's audience is not this server")
	case cl.ClientID == "" || cl.ClientID != clientID:
		return refusal("", "the assertion was issued for another client")
	case cl.Expiry == nil || cl.IssuedAt == nil:
		return refusal("", "the assertion must have exp and iat")
	case !now.Before(cl.Expiry.Time().Add(IDJAGSkew)):
		return refusal("", "the assertion expired")
	case cl.IssuedAt.Time().After(now.Add(IDJAGSkew)) || cl.Expiry.Time().Sub(cl.IssuedAt.Time()) > IDJAGMaxLifetime:
		return refusal("", "the assertion's lifetime is too long or it was issued in the future")
	case cl.JTI == "" || len(cl.JTI) > maxJTI:
		return refusal("", "the assertion must have a jti")
	case cl.Subject == "":
		return refusal("", "the assertion must have a subject")
	case len(cl.Resource) != 1:
		return refusal("resource", "the assertion must name one resource")
	}
	return nil
}

// mapIDJAG applies the workspace's policy to an assertion and finds the
// person it names, and with member checks now that they are a member.
func (s *Service) mapIDJAG(ctx context.Context, cd *candidate, cl *idjagClaims, clientID string, member bool) (*identity.Asserted, error) {
	pol := cd.pol.Accept
	if !slices.Contains(pol.Clients, clientID) {
		return nil, refusal("", "the workspace does not accept identity assertions for this client")
	}
	res := strings.TrimRight(cl.Resource[0], "/")
	if !slices.ContainsFunc(pol.Resources, func(r string) bool { return sameURL(r, res) }) {
		return nil, refusal("resource", "the workspace does not accept identity assertions for this resource")
	}
	var scope []string
	for _, w := range gatehouse.Scopes(cl.Scope) {
		if slices.Contains(pol.Scopes, w) {
			scope = append(scope, w)
		}
	}
	// A token without a tool scope may use every tool (gatehouse.ToolScoped):
	// an assertion must ask for some.
	if !gatehouse.ToolScoped(strings.Join(scope, " ")) {
		return nil, refusal("scope", "the assertion asks for no tool scope the workspace allows")
	}
	uid, err := s.idjagUser(ctx, cd.c, cl)
	if err != nil {
		return nil, err
	}
	if member {
		if _, _, err := workspace.LiveMember(ctx, s.store, cd.c.OrgID, uid); errors.Is(err, gatehouse.ErrNotFound) {
			return nil, errNotMember
		} else if err != nil {
			return nil, gatehouse.Internal("find member", err)
		}
	}
	return &identity.Asserted{UserID: uid, OrgID: cd.c.OrgID, ClientID: clientID, Resource: res, Scope: strings.Join(scope, " "),
		Detail: map[string]any{"connection_id": cd.c.ID, "jti": cl.JTI}}, nil
}

var errNotMember = refusal("", "the assertion's subject is not a member of the workspace")

// idjagUser is the account an assertion names at connection c: the one
// linked to its subject there, else the verified account of its address
// when that address is in a domain c serves (never another domain).
func (s *Service) idjagUser(ctx context.Context, c *Connection, cl *idjagClaims) (string, error) {
	uid, err := s.store.LinkedUser(ctx, c.ID, cl.Subject)
	if err == nil {
		return uid, nil
	}
	if !errors.Is(err, gatehouse.ErrNotFound) {
		return "", gatehouse.Internal("find linked user", err)
	}
	if cl.Email == "" || (cl.EmailVerified != nil && !*cl.EmailVerified) {
		return "", errNotMember
	}
	key, _, err := gatehouse.ParseEmail(cl.Email)
	if err != nil {
		return "", errNotMember
	}
	served, err := s.store.ConnectionForDomain(ctx, key[strings.LastIndexByte(key, '@')+1:])
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && served.ID != c.ID) {
		return "", errNotMember
	}
	if err != nil {
		return "", gatehouse.Internal("find connection of domain", err)
	}
	u, err := s.store.Identity().UserByEmail(ctx, key)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (!u.EmailVerified || u.DisabledAt != nil)) {
		return "", errNotMember
	}
	if err != nil {
		return "", gatehouse.Internal("find user", err)
	}
	return u.ID, nil
}

// IssueIDJAG applies org orgID's policy to an ID-JAG that client
// clientID asks for, for member userID, audience, resource ("" for none)
// and scope, and returns the scope it may carry (the asked one narrowed
// to the policy's; "" when none was asked). Issued and refused requests
// are audited in the workspace.
func (s *Service) IssueIDJAG(ctx context.Context, orgID, userID, clientID, audience, resource, scope string) (string, error) {
	out, err := s.issueIDJAG(ctx, orgID, userID, clientID, audience, resource, scope)
	action, meta := "sso.idjag_issued", map[string]any{"client_id": clientID, "audience": audience, "resource": resource, "scope": out}
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind == gatehouse.KindInternal {
			return "", err
		}
		action, meta["reason"] = "sso.idjag_refused", err.Error()
		if errors.As(err, &e) {
			meta["reason"] = e.Message
		}
	}
	if aerr := s.ws.Audit(ctx, s.store, orgID, userID, action, "user", userID, meta); aerr != nil {
		return "", gatehouse.Internal("audit id-jag", aerr)
	}
	return out, err
}

func (s *Service) issueIDJAG(ctx context.Context, orgID, userID, clientID, audience, resource, scope string) (string, error) {
	pol, err := policyOf(ctx, s.store, orgID)
	if err != nil {
		return "", err
	}
	if _, _, err := workspace.LiveMember(ctx, s.store, orgID, userID); errors.Is(err, gatehouse.ErrNotFound) {
		return "", gatehouse.Errorf(gatehouse.KindUnauthorized, "the subject is no longer a member of the workspace")
	} else if err != nil {
		return "", gatehouse.Internal("find member", err)
	}
	is := pol.Issue
	if !slices.Contains(is.Clients, clientID) {
		return "", gatehouse.Errorf(gatehouse.KindForbidden, "the workspace does not let this client ask for identity assertions")
	}
	if !slices.ContainsFunc(is.Audiences, func(a string) bool { return sameURL(a, audience) }) {
		return "", refusal("audience", "the workspace does not issue identity assertions for this audience")
	}
	if resource != "" && !slices.ContainsFunc(is.Resources, func(r string) bool { return sameURL(r, resource) }) {
		return "", refusal("resource", "the workspace does not issue identity assertions for this resource")
	}
	asked := gatehouse.Scopes(scope)
	var out []string
	for _, w := range asked {
		if slices.Contains(is.Scopes, w) {
			out = append(out, w)
		}
	}
	if len(asked) > 0 && len(out) == 0 {
		return "", refusal("scope", "the workspace allows none of the scopes asked for")
	}
	return strings.Join(out, " "), nil
}
