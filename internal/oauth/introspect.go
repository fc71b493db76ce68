package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// MaxIntrospectedToken bounds the token an introspection looks at: a
// longer one is no token of ours and is answered inactive unread.
const MaxIntrospectedToken = 8 << 10

// introspection is the answer of the introspection endpoint (RFC 7662
// §2.2). An inactive token's answer is {"active": false} and nothing
// else, whatever made it inactive. OrgID is the workspace the token acts
// in, always the caller's own.
type introspection struct {
	Active    bool     `json:"active"`
	Scope     string   `json:"scope,omitempty"`
	ClientID  string   `json:"client_id,omitempty"`
	TokenType string   `json:"token_type,omitempty"`
	Exp       int64    `json:"exp,omitempty"`
	Iat       int64    `json:"iat,omitempty"`
	Sub       string   `json:"sub,omitempty"`
	Aud       []string `json:"aud,omitempty"`
	Iss       string   `json:"iss,omitempty"`
	OrgID     string   `json:"org_id,omitempty"`
}

// Token types of an active answer: an access token is a Bearer token
// (RFC 6750); a refresh token says so, so that a resource server that
// checks token_type never takes one for an access token.
const (
	tokenTypeBearer  = "Bearer"
	tokenTypeRefresh = "refresh_token"
)

// HandleIntrospect handles "POST /oauth/introspect", token introspection
// (RFC 7662) for resource servers. The caller authenticates
// (introspectionCaller) and learns about tokens of its own workspace
// only: an access token (of a sign-in, a workspace key or an OAuth grant)
// or, for a workspace application, a refresh token issued to itself. Any
// other token, and a token that is not live, is {"active": false}, the
// same answer byte for byte. A caller that fails to authenticate is
// answered 401 (invalid_client, or invalid_token for a bearer token); an
// address whose failures pass failures' limit gets 429 instead, so an
// unauthenticated scan of the endpoint soon stops. Authenticated calls
// are not limited: a resource server may introspect every request it
// serves.
func (s *Server) HandleIntrospect(failures *ratelimit.Limiter, clientIP func(*http.Request) string) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		form, err := parseForm(r)
		if err != nil {
			return err
		}
		org, clientID, err := s.introspectionCaller(r, form)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
				if ok, wait := failures.Allow(clientIP(r)); !ok {
					return tooManyRequests(wait)
				}
				if e.Code == "invalid_token" {
					w.Header().Set("WWW-Authenticate", `Bearer realm="gatehouse", error="invalid_token", error_description="`+e.Description+`"`)
				}
			}
			return err
		}
		raw := form.Get("token")
		if raw == "" {
			return invalidRequest("token is required")
		}
		info, err := s.introspect(r.Context(), raw, form.Get("token_type_hint"), org, clientID)
		if err != nil {
			return serverError(err)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		httpjson.Write(w, http.StatusOK, s.introspectionOf(info))
		return nil
	})
}

// introspectionCaller authenticates the caller of the introspection
// endpoint and returns its workspace, and its client id when it is an
// application (refresh tokens introspect for the client they were issued
// to only). A caller is either
//
//   - a bearer access token obtained by exchanging a workspace key
//     (svc_o_): its workspace is the key's (keyCaller); or
//   - a confidential workspace application, authenticated as at the
//     token endpoint (authenticateClient; client_secret_basic,
//     client_secret_post, private_key_jwt): its workspace is the
//     application's.
//
// Anything else is 401: invalid_token for a bearer token that is not a
// live workspace key's, invalid_client otherwise. Both at once is 400
// (RFC 6749 §2.3: one method per request).
func (s *Server) introspectionCaller(r *http.Request, form url.Values) (orgID, clientID string, err error) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	if strings.EqualFold(scheme, "Bearer") {
		if form.Has("client_id") || form.Has("client_secret") || form.Has("client_assertion") {
			return "", "", invalidRequest("authenticate one way: a bearer token or client credentials, not both")
		}
		org, err := s.keyCaller(r.Context(), strings.TrimSpace(cred))
		return org, "", err
	}
	if h == "" && !form.Has("client_id") && !form.Has("client_assertion") {
		return "", "", invalidClient("introspection needs a workspace key's access token (Authorization: Bearer) or a confidential workspace application's credentials")
	}
	c, err := s.authenticateClient(r, form)
	if err != nil {
		return "", "", err
	}
	if !c.Confidential() || c.OrgID == "" {
		return "", "", invalidClient("only a confidential workspace application may introspect tokens")
	}
	return c.OrgID, c.ID, nil
}

var errNotKeyCaller = &Error{Code: "invalid_token", Status: http.StatusUnauthorized,
	Description: "introspection takes the access token of a workspace key (svc_o_), or a confidential workspace application's credentials"}

// keyCaller is the workspace of a bearer caller: raw must be a live
// access token exchanged for a workspace key (its subject is the key),
// checked as every route checks a bearer token (identity.Authenticate:
// signature, expiry, the revocation list, no database read) and as the
// tool APIs check a caller's standing (ToolAccess: the key is still
// usable and its workspace live, cached per key).
//
// A resource server presents the same token on every call, so the
// principal of a token that passed is kept (callers, by the token's
// hash, for cache.TTL): a kept one is checked for expiry and against the
// revocation list again on every call, and only the signature and the
// claims are not parsed again.
func (s *Server) keyCaller(ctx context.Context, raw string) (string, error) {
	if raw == "" {
		return "", errNotKeyCaller
	}
	now := s.clock()
	h := sha256.Sum256([]byte(raw))
	p, ok := s.callers.Get(h, now)
	if ok && (!now.Before(p.ExpiresAt) || s.svc.Revoked(p)) {
		s.callers.Drop(h)
		ok = false
	}
	if !ok {
		var err error
		if p, err = s.svc.Authenticate(raw); err != nil {
			return "", &Error{Code: "invalid_token", Status: http.StatusUnauthorized, Description: "invalid, expired or revoked access token"}
		}
	}
	if p.Pending || p.Via != gatehouse.ViaAPIKey || p.KeyID == "" || p.UserID != p.KeyID {
		return "", errNotKeyCaller // a sign-in's, a grant's or a personal key's token
	}
	if !ok {
		s.callers.Put(h, p, now)
	}
	if err := s.svc.ToolAccess(ctx, p); err != nil {
		if gatehouse.ErrorKind(err) == gatehouse.KindInternal {
			return "", serverError(err)
		}
		return "", &Error{Code: "invalid_token", Status: http.StatusUnauthorized, Description: "the workspace key was revoked or has expired"}
	}
	return p.OrgID, nil
}

// introspect is the live token raw of workspace org, or nil. An access
// token of any kind is the caller's to know when it acts in org; a
// refresh token only when the caller is the application clientID it was
// issued to (a workspace key's caller has no client: refresh tokens are
// the authorization server's and their client's business). hint only
// orders the lookups (RFC 7662 §2.1). A token that is live but of
// another workspace is nil as an unknown one is: the caller learns
// nothing of other workspaces.
func (s *Server) introspect(ctx context.Context, raw, hint, org, clientID string) (*identity.TokenInfo, error) {
	if len(raw) > MaxIntrospectedToken {
		return nil, nil
	}
	access := func() (*identity.TokenInfo, error) { return s.svc.AccessTokenInfo(ctx, raw) }
	refresh := func() (*identity.TokenInfo, error) {
		// A refresh token is "<session id>.<secret>", never a JWT's three
		// parts; a caller without a client has none to introspect.
		if clientID == "" || strings.Count(raw, ".") == 2 {
			return nil, nil
		}
		return s.svc.RefreshTokenInfo(ctx, raw, clientID)
	}
	kinds := [2]func() (*identity.TokenInfo, error){access, refresh}
	if hint == identity.TokenRefresh {
		kinds[0], kinds[1] = refresh, access
	}
	for _, find := range kinds {
		info, err := find()
		if err != nil {
			return nil, err
		}
		if info != nil {
			if subtle.ConstantTimeCompare([]byte(info.OrgID), []byte(org)) != 1 {
				return nil, nil
			}
			return info, nil
		}
	}
	return nil, nil
}

// introspectionOf is the answer for info (nil: inactive).
func (s *Server) introspectionOf(info *identity.TokenInfo) introspection {
	if info == nil {
		return introspection{}
	}
	out := introspection{Active: true, Scope: info.Scope, ClientID: info.ClientID, Sub: info.Subject, Aud: info.Audience,
		Iss: info.Issuer, OrgID: info.OrgID, Exp: unix(info.ExpiresAt), Iat: unix(info.IssuedAt), TokenType: tokenTypeBearer}
	if info.Kind == identity.TokenRefresh {
		out.TokenType = tokenTypeRefresh
	}
	if out.Iss == "" {
		out.Iss = s.issuer
	}
	return out
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
