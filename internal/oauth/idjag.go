package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// Identity assertion authorization grants (ID-JAG,
// draft-ietf-oauth-identity-assertion-authz-grant, profiled by MCP's
// Enterprise-Managed Authorization), both ways: the JWT-bearer grant
// (RFC 7523) accepts an ID-JAG that a workspace's identity provider
// issued, and RFC 8693 token exchange issues one for another
// authorization server from an ID token of ours. The workspace's policy
// and the assertion's checks are internal/sso's (Assertions).

// The grant and token types of ID-JAG.
const (
	GrantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	TokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	// IDJAGTTL is the lifetime of the ID-JAGs issued here (the draft
	// and the issue: five minutes at most).
	IDJAGTTL = 5 * time.Minute
	// idjagTyp is the typ header of an ID-JAG.
	idjagTyp = "oauth-id-jag+jwt"
)

// Assertions is the identity-assertion side of SSO (internal/sso), which
// the app wires: the workspace's policy both ways.
type Assertions interface {
	// AcceptIDJAG checks an ID-JAG that client clientID presents and
	// has open start the access it vouches for, in the one write
	// transaction that also spends the assertion's jti.
	AcceptIDJAG(ctx context.Context, raw, clientID string, open identity.OpenAsserted) (*identity.SignIn, error)
	// IssueIDJAG applies org orgID's policy to an ID-JAG asked for and
	// returns the scope it may carry.
	IssueIDJAG(ctx context.Context, orgID, userID, clientID, audience, resource, scope string) (string, error)
}

// assertionGrant reports whether gt is one of the ID-JAG grants, whose
// clients the workspace's policy names (not their grant_types).
func assertionGrant(gt string) bool { return gt == GrantJWTBearer || gt == GrantTokenExchange }

// assertionError maps an error of Assertions to an OAuth error: the
// resource or audience refused is invalid_target, the scope
// invalid_scope, a client the workspace does not name forbidden, the
// rest invalid_grant.
func assertionError(err error, forbidden string) error {
	var e *gatehouse.Error
	if !errors.As(err, &e) {
		return serverError(err)
	}
	switch {
	case e.Field == "resource" || e.Field == "audience":
		return oauthErr("invalid_target", http.StatusBadRequest, "%s", e.Message)
	case e.Field == "scope":
		return oauthErr("invalid_scope", http.StatusBadRequest, "%s", e.Message)
	case e.Kind == gatehouse.KindForbidden && forbidden != "":
		return oauthErr(forbidden, http.StatusBadRequest, "%s", e.Message)
	case e.Kind == gatehouse.KindUnavailable:
		return oauthErr("temporarily_unavailable", http.StatusServiceUnavailable, "%s", e.Message)
	case e.Kind == gatehouse.KindInternal:
		return serverError(err)
	}
	return invalidGrant("%s", e.Message)
}

// jwtBearerGrant accepts an ID-JAG (RFC 7523 §2.1): an access token
// bound to the assertion's resource, with its scope narrowed to the
// workspace's policy (and to the request's scope when given), and no
// refresh token (docs/decisions.md).
type jwtBearerGrant struct{ s *Server }

func (g jwtBearerGrant) exchange(ctx context.Context, r *tokenRequest) (*identity.SignIn, error) {
	s := g.s
	raw := r.form.Get("assertion")
	if raw == "" {
		return nil, invalidRequest("assertion is required")
	}
	si, err := s.assertions.AcceptIDJAG(ctx, raw, r.client.ID, func(st identity.Store, a *identity.Asserted) (*identity.SignIn, error) {
		if err := g.fit(r, a); err != nil {
			return nil, err
		}
		return s.svc.StartAssertedSession(ctx, st, *a, r.meta)
	})
	if err != nil {
		return nil, assertionError(err, "")
	}
	return si, nil
}

// fit checks an accepted assertion against the request and this server:
// the client's workspace, the resource (the request may repeat the
// assertion's, nothing else; an API of this server) and the scope (the
// request's, when given, narrows the assertion's and keeps a tool
// scope). Its errors are the domain's, which assertionError maps, so the
// refusal is audited with the assertion's other refusals.
func (g jwtBearerGrant) fit(r *tokenRequest, a *identity.Asserted) error {
	if r.client.OrgID != "" && r.client.OrgID != a.OrgID {
		return gatehouse.Errorf(gatehouse.KindUnauthorized, "the client is another workspace's application")
	}
	if res := r.form["resource"]; len(res) > 1 || (len(res) == 1 && strings.TrimRight(res[0], "/") != a.Resource) {
		return gatehouse.InvalidField("resource", "resource differs from the assertion's")
	}
	if !g.s.knownResource(a.Resource) || strings.TrimRight(a.Resource, "/") == g.s.issuer {
		return gatehouse.InvalidField("resource", "the assertion's resource is not an API of this server")
	}
	asked := r.form.Get("scope")
	if asked == "" {
		return nil
	}
	granted := gatehouse.Scopes(a.Scope)
	for _, w := range gatehouse.Scopes(asked) {
		if !slices.Contains(granted, w) {
			return gatehouse.InvalidField("scope", "the scope asks for more than the assertion grants")
		}
	}
	if !gatehouse.ToolScoped(asked) {
		return gatehouse.InvalidField("scope", "the scope must keep a tool scope")
	}
	a.Scope = strings.Join(gatehouse.Scopes(asked), " ")
	return nil
}

// exchangeResponse is the answer of an RFC 8693 token exchange (§2.2.1;
// an ID-JAG is no access token: token_type N_A).
type exchangeResponse struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope,omitempty"`
}

// idjagClaims are the claims of an ID-JAG issued here.
type idjagClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	ClientID string `json:"client_id"`
	JTI      string `json:"jti"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	Resource string `json:"resource,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Email    string `json:"email,omitempty"`
}

// handleExchange answers a token exchange for an ID-JAG by client c, and
// records it as a security event.
func (s *Server) handleExchange(w http.ResponseWriter, r *http.Request, form map[string][]string, c *Client) error {
	out, userID, err := s.issueIDJAG(r.Context(), form, c)
	if s.events != nil {
		attrs := []slog.Attr{slog.String("method", "oauth_idjag_issue"), slog.String("client_id", c.ID)}
		if err == nil {
			s.events.Event(r.Context(), gatehouse.EventSignIn, append(attrs, slog.String("user_id", userID))...)
		} else {
			s.events.Event(r.Context(), gatehouse.EventSignInFailure, append(attrs, slog.String("reason", errReason(err)))...)
		}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Pragma", "no-cache")
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// issueIDJAG issues an ID-JAG (RFC 8693 with the draft's section 4): the
// subject token an ID token of ours issued to the calling client, not
// expired, its account active and its session live; the audience,
// resource and scope within the policy of the session's workspace; the
// ID-JAG signed by the key ring with the client's ID token algorithm,
// typ oauth-id-jag+jwt, a fresh jti, IDJAGTTL.
func (s *Server) issueIDJAG(ctx context.Context, form map[string][]string, c *Client) (*exchangeResponse, string, error) {
	get := func(k string) string {
		if v := form[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if get("requested_token_type") != TokenTypeIDJAG {
		return nil, "", invalidRequest("requested_token_type must be %s", TokenTypeIDJAG)
	}
	if get("subject_token_type") != TokenTypeIDToken {
		return nil, "", invalidRequest("subject_token_type must be %s", TokenTypeIDToken)
	}
	audience, raw := get("audience"), get("subject_token")
	if audience == "" || raw == "" {
		return nil, "", invalidRequest("subject_token and audience are required")
	}
	if len(form["resource"]) > 1 {
		return nil, "", oauthErr("invalid_target", http.StatusBadRequest, "only one resource may be requested")
	}
	if s.logoutSigner == nil {
		return nil, "", oauthErr("unsupported_grant_type", http.StatusBadRequest, "this server issues no identity assertions")
	}
	now := s.clock()
	idt, err := s.ownIDToken(ctx, raw)
	if errors.Is(err, errHint) || (err == nil && (idt.Expiry == nil || !now.Before(idt.Expiry.Time()) ||
		!slices.Contains(idt.Audience, c.ID) || idt.SID == "")) {
		return nil, "", invalidGrant("subject_token is not a live ID token this server issued to the client")
	}
	if err != nil {
		return nil, "", serverError(err)
	}
	u, orgID, err := s.svc.AssertionSubject(ctx, idt.Subject, idt.SID)
	if err != nil {
		return nil, "", grantError(err)
	}
	if c.OrgID != "" && c.OrgID != orgID {
		return nil, "", invalidGrant("the client is another workspace's application")
	}
	resource := get("resource")
	scope, err := s.assertions.IssueIDJAG(ctx, orgID, u.ID, c.ID, audience, resource, get("scope"))
	if err != nil {
		return nil, "", assertionError(err, "unauthorized_client")
	}
	cl := idjagClaims{Issuer: s.issuer, Subject: u.ID, Audience: audience, ClientID: c.ID, JTI: rand.Text(),
		Expiry: now.Add(IDJAGTTL).Unix(), IssuedAt: now.Unix(), Resource: resource, Scope: scope}
	if u.EmailVerified {
		cl.Email = u.Email
	}
	payload, err := json.Marshal(cl)
	if err != nil {
		return nil, "", serverError(err)
	}
	jag, err := s.logoutSigner.SignType(ctx, idTokenAlg(c), idjagTyp, payload)
	if err != nil {
		return nil, "", serverError(err)
	}
	return &exchangeResponse{AccessToken: jag, IssuedTokenType: TokenTypeIDJAG, TokenType: "N_A", ExpiresIn: int64(IDJAGTTL / time.Second),
		Scope: scope}, u.ID, nil
}

// errReason is an OAuth error's code and description for the security
// log.
func errReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code + ": " + e.Description
	}
	return "internal"
}
