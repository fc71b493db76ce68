package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// AuthRequest is a validated authorization request (GET /oauth/authorize):
// what the consent page shows and posts back.
type AuthRequest struct {
	Client        *Client
	RedirectURI   string
	State         string
	CodeChallenge string
	Scope         string
	Resource      string
	// OpenID Connect (Core §3.1.2.1).
	Nonce     string   // goes with the code into the ID token
	Prompt    []string // none, login, consent, select_account
	LoginHint string   // prefills the sign-in address
	// Reauthenticate is set when the browser must sign in afresh before
	// consent: prompt=login, a max_age its sign-in is older than, or an
	// id_token_hint naming another user.
	Reauthenticate bool

	authTime time.Time // the signed-in browser's, for the ID tokens
	// SessionID is the browser session approving, set by the consent
	// page: the grant records it for back-channel logout.
	SessionID string
}

// Prompts reports whether the request's prompt holds p.
func (a *AuthRequest) Prompts(p string) bool { return slices.Contains(a.Prompt, p) }

// Params returns the request as query parameters, for the consent form to
// post back and for the sign-in page to return to. prompt, max_age,
// login_hint and id_token_hint are left out: they were acted on when the
// request arrived, and the sign-in they ask for is the one that follows,
// so the request it returns to must not ask for it again.
func (a *AuthRequest) Params() url.Values {
	v := url.Values{}
	v.Set("response_type", "code")
	v.Set("client_id", a.Client.ID)
	v.Set("redirect_uri", a.RedirectURI)
	v.Set("code_challenge", a.CodeChallenge)
	v.Set("code_challenge_method", "S256")
	for k, val := range map[string]string{"state": a.State, "scope": a.Scope, "resource": a.Resource, "nonce": a.Nonce} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v
}

// Refusal is an authorization request that cannot go on. With RedirectTo
// set, the client is told by redirect (RFC 6749 §4.1.2.1); without it the
// client or its redirect URI cannot be trusted, and the user sees Message
// on an error page instead.
type Refusal struct {
	RedirectTo string
	Message    string
}

func (r *Refusal) Error() string { return r.Message }

// Requester is who sent an authorization request.
type Requester struct {
	IP       string // the peer address, for the metadata document fetch limits
	SignedIn bool   // the browser has a Gatehouse session
	// UserID and AuthTime are the signed-in browser's user and when it
	// last authenticated (identity.BrowserSession), for prompt, max_age
	// and id_token_hint, and for the auth_time of ID tokens.
	UserID   string
	AuthTime time.Time
}

// ParseAuthorize validates an authorization request. Its error is a
// *Refusal, an *gatehouse.Error of KindTooMany, or an internal error.
// Before the user has signed in, errors are redirected only to clients
// that RedirectsErrors: otherwise anyone could use Gatehouse to bounce a
// browser to the redirect URI a client registered itself (RFC 9700
// §4.11.2).
func (s *Server) ParseAuthorize(ctx context.Context, q url.Values, who Requester) (*AuthRequest, error) {
	if !gatehouse.CleanValues(q, 0) {
		return nil, &Refusal{Message: "The request has parameters that are not valid text."}
	}
	// Who to answer and where must be unambiguous before anything is
	// redirected.
	for _, k := range []string{"client_id", "redirect_uri"} {
		if len(q[k]) > 1 {
			return nil, &Refusal{Message: "The request repeats the parameter " + k + "."}
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return nil, &Refusal{Message: "The application did not say who it is (client_id is missing)."}
	}
	c, err := s.Client(ctx, clientID, who.IP)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusTooManyRequests {
			return nil, &gatehouse.Error{Kind: gatehouse.KindTooMany, Message: e.Description, RetryAfter: e.RetryAfter}
		}
		if errors.As(err, &e) && e.Status < 500 {
			return nil, &Refusal{Message: "This application is not registered with Gatehouse: " + e.Description}
		}
		return nil, err
	}
	redirect, ok := matchRedirect(c, q.Get("redirect_uri"))
	if !ok {
		return nil, &Refusal{Message: "The application asked to return to an address it did not register, so Gatehouse will not send you there."}
	}
	a := &AuthRequest{Client: c, RedirectURI: redirect, State: q.Get("state"), Scope: q.Get("scope")}
	fail := func(code, desc string) error {
		if !who.SignedIn && !c.RedirectsErrors {
			return &Refusal{Message: desc}
		}
		return &Refusal{RedirectTo: s.errorRedirect(a, code, desc), Message: desc}
	}
	for k, v := range q {
		if len(v) > 1 && k != "resource" {
			return nil, fail("invalid_request", "parameter "+k+" is repeated")
		}
		if len(v) > 0 && len(v[0]) > MaxParam {
			return nil, fail("invalid_request", "parameter "+k+" is too long")
		}
	}
	if rt := q.Get("response_type"); rt != "code" {
		if rt == "" {
			return nil, fail("invalid_request", "response_type is required")
		}
		return nil, fail("unsupported_response_type", "only response_type=code is supported")
	}
	if !c.allows(GrantAuthorizationCode) {
		return nil, fail("unauthorized_client", "the client is not registered for the authorization_code grant")
	}
	a.CodeChallenge = q.Get("code_challenge")
	switch method := q.Get("code_challenge_method"); {
	case a.CodeChallenge == "":
		return nil, fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
	case method != "S256":
		return nil, fail("invalid_request", "code_challenge_method must be S256")
	case !validChallenge(a.CodeChallenge):
		return nil, fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)")
	}
	if rs := q["resource"]; len(rs) > 1 {
		return nil, fail("invalid_target", "only one resource may be requested")
	} else if len(rs) == 1 {
		if !s.knownResource(rs[0]) {
			return nil, fail("invalid_target", "unknown resource; use "+s.apiURL+" or a tool API under it")
		}
		a.Resource = rs[0]
	}
	scope, e := requestScope(c, a.Scope)
	if e != nil {
		return nil, fail(e.Code, e.Description)
	}
	a.Scope = scope
	if err := s.parseOIDC(ctx, q, who, a, fail); err != nil {
		return nil, err
	}
	return a, nil
}

// parseOIDC reads the OpenID Connect parameters of an authorization
// request (Core §3.1.2.1, §6) into a and decides what they ask of the
// browser: nothing, a fresh sign-in (a.Reauthenticate), or, for
// prompt=none, an error by redirect since no page may be shown. Consent is
// asked on every authorization, so prompt=none with a session answers
// consent_required, except for a workspace application (AppMember decides:
// a first-party application's member needs no page).
func (s *Server) parseOIDC(ctx context.Context, q url.Values, who Requester, a *AuthRequest, fail func(code, desc string) error) error {
	if q.Has("request") {
		return fail("request_not_supported", "request objects are not supported; send the parameters in the query")
	}
	if q.Has("request_uri") {
		return fail("request_uri_not_supported", "request_uri is not supported; send the parameters in the query")
	}
	for _, p := range strings.Fields(q.Get("prompt")) {
		switch p {
		case PromptNone, PromptLogin, PromptConsent, PromptSelectAccount:
		default:
			return fail("invalid_request", "unknown prompt value "+p)
		}
		if !slices.Contains(a.Prompt, p) {
			a.Prompt = append(a.Prompt, p)
		}
	}
	none := a.Prompts(PromptNone)
	if none && len(a.Prompt) > 1 {
		return fail("invalid_request", "prompt=none cannot be combined with other prompt values")
	}
	maxAge := -1
	if q.Has("max_age") {
		n, err := strconv.Atoi(q.Get("max_age"))
		if err != nil || n < 0 {
			return fail("invalid_request", "max_age must be a number of seconds")
		}
		maxAge = n
	}
	a.Nonce, a.LoginHint = q.Get("nonce"), q.Get("login_hint")
	hintSub := ""
	if raw := q.Get("id_token_hint"); raw != "" {
		h, err := s.parseHint(ctx, raw)
		if errors.Is(err, errHint) || err == nil && !slices.Contains(h.aud, a.Client.ID) {
			return fail("invalid_request", "id_token_hint is not an ID token issued by this server to this client")
		}
		if err != nil {
			return err
		}
		hintSub = h.sub
	}
	if !who.SignedIn {
		if none {
			return fail("login_required", "the user is not signed in")
		}
		return nil // the sign-in that follows is fresh
	}
	a.authTime = who.AuthTime
	age := int64(s.clock().Sub(who.AuthTime) / time.Second) // in seconds: a huge max_age must not overflow a Duration
	a.Reauthenticate = a.Prompts(PromptLogin) ||
		maxAge == 0 || maxAge > 0 && age > int64(maxAge) ||
		hintSub != "" && hintSub != who.UserID
	switch {
	case none && a.Reauthenticate:
		return fail("login_required", "the user must sign in again")
	case none && a.Client.OrgID == "":
		return fail("consent_required", "the user must approve the request on the consent page")
	}
	// A workspace application's prompt=none is decided by AppMember, after
	// the membership check: a first-party application's member goes on
	// without a page, anyone else is answered by redirect.
	return nil
}

// matchRedirect finds the registered redirect URI that raw names: an exact
// match, or a loopback URI on any port (RFC 8252 §7.3). Without raw, the one
// registered URI is used.
func matchRedirect(c *Client, raw string) (string, bool) {
	if raw == "" {
		if len(c.RedirectURIs) == 1 {
			return c.RedirectURIs[0], true
		}
		return "", false
	}
	for _, r := range c.RedirectURIs {
		if r == raw {
			return raw, true
		}
	}
	if c.app != nil {
		return "", false // a workspace application's URIs match exactly
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) || u.Fragment != "" {
		return "", false
	}
	for _, r := range c.RedirectURIs {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == u.Hostname() && ru.EscapedPath() == u.EscapedPath() && ru.RawQuery == u.RawQuery && ru.User == nil && u.User == nil {
			return raw, true
		}
	}
	return "", false
}

// knownResource reports whether res names Gatehouse, its MCP server, the
// base of its tool APIs, or a tool's API or a URL under it (RFC 8707 §2: an absolute URI
// without a fragment), as the kernel matches a token's audience
// (gatehouse.ResourceTool).
func (s *Server) knownResource(res string) bool {
	u, err := url.Parse(res)
	if err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(res, "#") {
		return false
	}
	if p := "/" + u.Path + "/"; strings.Contains(p, "/../") || strings.Contains(p, "/./") {
		return false // "{api_url}/tasks/../forms" would read as Forms and bind to Tasks
	}
	if r := strings.TrimRight(res, "/"); r == s.issuer || (s.mcpURL != "" && r == s.mcpURL) {
		return true
	}
	tool := gatehouse.ResourceTool(res, s.apiURL)
	return tool == gatehouse.AllTools || workspace.IsTool(tool)
}

// redirectWith adds params to the redirect URI, keeping its own query.
func redirectWith(redirect string, params url.Values) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return redirect
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func (s *Server) errorRedirect(a *AuthRequest, code, desc string) string {
	p := url.Values{"error": {code}, "error_description": {desc}, "iss": {s.issuer}}
	if a.State != "" {
		p.Set("state", a.State)
	}
	return redirectWith(a.RedirectURI, p)
}

// Approve records the user's grant of one workspace to the client, made
// by a session at level lvl, and returns where to send the browser: the
// redirect URI with a single-use code valid for 60 seconds, the state and
// the issuer (RFC 9207). A workspace requiring a level lvl misses refuses
// (403, workspace.ErrMFAPolicy). A workspace application's grant is made
// in its own workspace, whatever orgID says.
func (s *Server) Approve(ctx context.Context, a *AuthRequest, userID string, lvl gatehouse.Assurance, orgID string) (string, error) {
	if a.Client.OrgID != "" {
		orgID = a.Client.OrgID
	}
	g, err := s.svc.CreateGrant(ctx, identity.GrantInput{UserID: userID, ClientID: a.Client.ID, ClientName: a.Client.DisplayName(),
		OrgID: orgID, Scope: a.Scope, Resource: a.Resource, Level: lvl, SessionID: a.SessionID})
	if err != nil {
		return "", err
	}
	code := token.NewSecret("")
	now := s.clock()
	if err := s.recordOIDC(ctx, g.ID, a.Scope, lvl, a.authTime); err != nil {
		return "", err
	}
	if err := s.store.CreateCode(ctx, &Code{Hash: hash(code), GrantID: g.ID, ClientID: a.Client.ID, RedirectURI: a.RedirectURI,
		CodeChallenge: a.CodeChallenge, Resource: a.Resource, Nonce: a.Nonce, CreatedAt: now, ExpiresAt: now.Add(CodeTTL)}); err != nil {
		return "", err
	}
	p := url.Values{"code": {code}, "iss": {s.issuer}}
	if a.State != "" {
		p.Set("state", a.State)
	}
	return redirectWith(a.RedirectURI, p), nil
}

// Deny returns where to send the browser when the user refuses.
func (s *Server) Deny(a *AuthRequest) string {
	return s.errorRedirect(a, "access_denied", "the user denied the request")
}
