package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// tokenRequest is a parsed token request of an authenticated client.
type tokenRequest struct {
	form   url.Values
	client *Client
	meta   gatehouse.SessionMeta
	nonce  string // set by the code grant: the authorization request's
}

// tokenResponse is the successful answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope,omitempty"`
	IDToken      string `json:"id_token,omitempty"`
}

// grant is one grant type of the token endpoint.
type grant interface {
	exchange(ctx context.Context, r *tokenRequest) (*identity.SignIn, error)
}

func (s *Server) grants() map[string]grant {
	gs := map[string]grant{
		GrantAuthorizationCode: codeGrant{s},
		GrantRefreshToken:      refreshGrant{s},
		GrantDeviceCode:        deviceGrant{s},
	}
	if s.assertions != nil {
		gs[GrantJWTBearer] = jwtBearerGrant{s}
		gs[GrantTokenExchange] = nil // handleExchange: its answer is no access token
	}
	return gs
}

// HandleToken handles "POST /oauth/token".
func (s *Server) HandleToken() http.Handler {
	grants := s.grants()
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		cors(w)
		form, err := parseForm(r)
		if err != nil {
			return err
		}
		gt := form.Get("grant_type")
		g, ok := grants[gt]
		if !ok {
			if gt == "" {
				return invalidRequest("grant_type is required")
			}
			return oauthErr("unsupported_grant_type", http.StatusBadRequest, "grant_type '%s' is not supported", gt)
		}
		c, err := s.authenticateClient(r, form)
		if err != nil {
			return err
		}
		if !c.allows(gt) && !assertionGrant(gt) {
			return oauthErr("unauthorized_client", http.StatusBadRequest, "the client is not registered for the %s grant", gt)
		}
		if gt == GrantTokenExchange {
			return s.handleExchange(w, r, form, c)
		}
		tr := &tokenRequest{form: form, client: c, meta: sessionMeta(r)}
		si, err := g.exchange(r.Context(), tr)
		s.tokenEvent(r.Context(), gt, c, si, err)
		if err != nil {
			return err
		}
		// An openid grant's tokens come with an ID token (code, device and
		// refresh alike).
		idt, err := s.idToken(r.Context(), c, si, tr.nonce)
		if err != nil {
			return serverError(err)
		}
		w.Header().Set("Pragma", "no-cache") // RFC 6749 §5.1
		httpjson.Write(w, http.StatusOK, tokenResponse{AccessToken: si.AccessToken, TokenType: "Bearer",
			ExpiresIn: int64(si.ExpiresAt.Sub(s.clock()).Round(time.Second) / time.Second), RefreshToken: si.RefreshToken, Scope: si.Scope, IDToken: idt})
		return nil
	})
}

// parseForm reads an application/x-www-form-urlencoded body and refuses
// repeated parameters (RFC 6749 §3.2).
func parseForm(r *http.Request) (url.Values, error) {
	if err := r.ParseForm(); err != nil {
		if httpjson.TooBig(err) {
			return nil, oauthErr("invalid_request", http.StatusRequestEntityTooLarge, "request body too large")
		}
		return nil, invalidRequest("the body must be application/x-www-form-urlencoded")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 && k != "resource" {
			return nil, invalidRequest("parameter %s is repeated", k)
		}
	}
	if !gatehouse.CleanValues(r.Form, 0) {
		return nil, invalidRequest("parameters must be valid UTF-8 without NUL characters")
	}
	return r.PostForm, nil
}

// clientForm parses an endpoint's form and identifies the client it names
// (parseForm, then authenticateClient): the start of the endpoints that
// act for a client before anything else (device authorization,
// revocation).
func (s *Server) clientForm(r *http.Request) (url.Values, *Client, error) {
	form, err := parseForm(r)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.authenticateClient(r, form)
	if err != nil {
		return nil, nil, err
	}
	return form, c, nil
}

// authenticateClient identifies the client of a token, revocation or
// introspection request, the one place every endpoint authenticates
// clients. A public client (every client but a confidential workspace
// application) names itself by client_id in the body or by HTTP Basic with
// an empty password (as golang.org/x/oauth2 sends first), and a secret is
// refused. A confidential workspace application must authenticate by its
// registered method: client_secret_basic (RFC 6749 §2.3.1, id and secret
// form-urlencoded in Basic), client_secret_post (client_id and
// client_secret in the body) or private_key_jwt (RFC 7523). Every failure
// is 401 invalid_client (with WWW-Authenticate when Basic was tried).
func (s *Server) authenticateClient(r *http.Request, form url.Values) (*Client, error) {
	id := form.Get("client_id")
	user, pass, basic := r.BasicAuth()
	if basic {
		basicID, err := unescapeBasic(user)
		if err != nil || !gatehouse.CleanText(basicID) {
			return nil, invalidClient("malformed client credentials")
		}
		if pass, err = unescapeBasic(pass); err != nil {
			return nil, invalidClient("malformed client credentials")
		}
		if id != "" && id != basicID {
			return nil, invalidRequest("client_id in the body differs from the Authorization header")
		}
		id = basicID
	}
	secret := form.Get("client_secret")
	if _, ok := form["client_assertion_type"]; ok || form.Get("client_assertion") != "" {
		if pass != "" || secret != "" {
			return nil, invalidRequest("use one client authentication method")
		}
		if form.Get("client_assertion_type") != AssertionType {
			return nil, invalidClient("client_assertion_type must be %s", AssertionType)
		}
		return s.assertionClient(r, form.Get("client_assertion"), id)
	}
	if pass != "" && secret != "" {
		return nil, invalidRequest("use one client authentication method")
	}
	if id == "" {
		return nil, invalidClient("client_id is required")
	}
	c, err := s.Client(r.Context(), id, sessionMeta(r).IP)
	if err != nil {
		return nil, err
	}
	if c.Confidential() {
		method, given := AuthClientSecretPost, secret
		if pass != "" {
			method, given = AuthClientSecretBasic, pass
		}
		if err := s.clientSecret(c, method, given); err != nil {
			return nil, err
		}
		return c, nil
	}
	if pass != "" || secret != "" {
		return nil, invalidClient("public clients have no secret: authenticate with client_id only")
	}
	return c, nil
}

func sessionMeta(r *http.Request) gatehouse.SessionMeta {
	ip := r.RemoteAddr
	if host, _, err := net.SplitHostPort(ip); err == nil {
		ip = host
	}
	return gatehouse.SessionMeta{UserAgent: r.UserAgent(), IP: ip}
}

// grantError maps a domain error of issuing tokens to an OAuth error.
func grantError(err error) error {
	if errors.Is(err, identity.ErrResourceMismatch) {
		return oauthErr("invalid_target", http.StatusBadRequest, "resource differs from the one the grant was made for")
	}
	if errors.Is(err, identity.ErrScopeWidened) {
		return oauthErr("invalid_scope", http.StatusBadRequest, "the scope asks for more than the grant was made for")
	}
	switch gatehouse.ErrorKind(err) {
	case gatehouse.KindUnauthorized, gatehouse.KindNotFound, gatehouse.KindForbidden:
		var e *gatehouse.Error
		errors.As(err, &e)
		return invalidGrant("%s", e.Message)
	case gatehouse.KindInvalid:
		var e *gatehouse.Error
		errors.As(err, &e)
		return invalidRequest("%s", e.Message)
	}
	var oe *Error
	if errors.As(err, &oe) {
		return oe
	}
	return serverError(err)
}

// codeGrant exchanges an authorization code (RFC 6749 §4.1.3, PKCE RFC 7636
// §4.6). The code is single use: a code presented again revokes the grant
// it was issued under, and with it every token the first exchange issued.
type codeGrant struct{ s *Server }

var errBadCode = invalidGrant("invalid, expired or already used authorization code")

func (g codeGrant) exchange(ctx context.Context, r *tokenRequest) (*identity.SignIn, error) {
	s := g.s
	raw, verifier := r.form.Get("code"), r.form.Get("code_verifier")
	if raw == "" {
		return nil, invalidRequest("code is required")
	}
	if verifier == "" {
		return nil, invalidRequest("code_verifier is required (PKCE)")
	}
	h := hash(raw)
	now := s.clock()
	c, err := s.store.CodeByHash(ctx, h)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errBadCode
	}
	if err != nil {
		return nil, serverError(err)
	}
	if c.UsedAt != nil {
		g.reused(ctx, c)
		return nil, errBadCode
	}
	if !now.Before(c.ExpiresAt) || c.ClientID != r.client.ID {
		return nil, errBadCode
	}
	if ru := r.form.Get("redirect_uri"); ru != "" && ru != c.RedirectURI {
		return nil, invalidGrant("redirect_uri differs from the authorization request's")
	}
	if !validVerifier(verifier) || s256(verifier) != c.CodeChallenge {
		return nil, invalidGrant("code_verifier does not match the code_challenge")
	}
	if res := r.form["resource"]; len(res) > 1 || (len(res) == 1 && res[0] != c.Resource) {
		return nil, oauthErr("invalid_target", http.StatusBadRequest, "resource differs from the authorization request's")
	}
	// The conditional UPDATE spends the code in the transaction that opens
	// its session: of concurrent exchanges exactly one gets past it, and
	// the others see the code used only once that session exists.
	lost := false
	var si *identity.SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		if _, err := tx.UseCode(ctx, h, now); errors.Is(err, gatehouse.ErrNotFound) {
			lost = true
			return errBadCode
		} else if err != nil {
			return err
		}
		var err error
		si, err = s.svc.StartGrantSession(ctx, tx.Identity(), c.GrantID, r.meta)
		return err
	})
	if lost {
		g.reused(ctx, c)
		return nil, errBadCode
	}
	if err != nil {
		return nil, grantError(err)
	}
	r.nonce = c.Nonce
	return si, nil
}

// reused revokes the grant of a code presented a second time.
func (g codeGrant) reused(ctx context.Context, c *Code) {
	if err := g.s.svc.RevokeGrantNow(ctx, c.GrantID, "authorization code used twice"); err != nil {
		g.s.log.Error("revoke grant of a reused code", "grant_id", c.GrantID, "err", err)
	}
}

// refreshGrant rotates a refresh token issued under a grant to this client
// (RFC 6749 §6), with the reuse detection of identity.Refresh.
type refreshGrant struct{ s *Server }

func (g refreshGrant) exchange(ctx context.Context, r *tokenRequest) (*identity.SignIn, error) {
	rt := r.form.Get("refresh_token")
	if rt == "" {
		return nil, invalidRequest("refresh_token is required")
	}
	res := r.form["resource"]
	if len(res) > 1 {
		return nil, oauthErr("invalid_target", http.StatusBadRequest, "only one resource may be requested")
	}
	resource := ""
	if len(res) == 1 {
		resource = res[0]
	}
	// A refresh may narrow the scope, never widen it (RFC 6749 §6): the
	// grant refuses any word it does not hold.
	si, err := g.s.svc.RefreshGrant(ctx, rt, r.client.ID, resource, r.form.Get("scope"))
	if err != nil {
		return nil, grantError(err)
	}
	return si, nil
}

// tokenEvent records the outcome of a token request of grant type gt as
// a sign-in (method oauth_code, oauth_refresh, oauth_device or
// oauth_idjag); a device
// still waiting for its user (authorization_pending, slow_down) is not
// one.
func (s *Server) tokenEvent(ctx context.Context, gt string, c *Client, si *identity.SignIn, err error) {
	if s.events == nil {
		return
	}
	method := map[string]string{GrantAuthorizationCode: "oauth_code", GrantRefreshToken: "oauth_refresh", GrantDeviceCode: "oauth_device",
		GrantJWTBearer: "oauth_idjag"}[gt]
	attrs := []slog.Attr{slog.String("method", method), slog.String("client_id", c.ID)}
	if err == nil {
		s.events.Event(ctx, gatehouse.EventSignIn, append(attrs, slog.String("user_id", si.User.ID))...)
		return
	}
	var e *Error
	if errors.As(err, &e) && (e.Code == "authorization_pending" || e.Code == "slow_down") {
		return
	}
	s.events.Event(ctx, gatehouse.EventSignInFailure, append(attrs, slog.String("reason", errReason(err)))...)
}
