package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/keys"
)

// OpenID Connect Core 1.0 for the authorization code and device flows:
// ID tokens from the token endpoint, UserInfo, and the OpenID scopes. A
// request without openid behaves as plain OAuth did before.

// The OpenID Connect scopes (Core §5.4, §11).
const (
	ScopeOpenID        = "openid"
	ScopeProfile       = "profile"
	ScopeEmail         = "email"
	ScopeOfflineAccess = "offline_access"
)

// OIDCScopes are the OpenID Connect scopes, in the order discovery lists
// them.
var OIDCScopes = []string{ScopeOpenID, ScopeProfile, ScopeEmail, ScopeOfflineAccess}

// toolScopes are the tool APIs' scopes (issue 25 item 7), listed in
// scopes_supported beside the OpenID ones.
var toolScopes = []string{"tasks:read", "tasks:write", "links:read", "links:write", "forms:read", "forms:write", "sign:read", "sign:write"}

// IDTokenTTL is how long an ID token is valid: as long as the access token
// it comes with, and well inside keys.Keep, so a rotated key stays
// published while anything it signed is still valid.
const IDTokenTTL = time.Hour

// The acr values of ID tokens: the NIST SP 800-63B authenticator assurance
// level of the sign-in that approved the grant. aal2 means a second factor
// (authenticator app, recovery code or passkey) was presented; aal1 one
// factor.
var acrValues = []string{gatehouse.AAL1, gatehouse.AAL2}

// The prompt values (Core §3.1.2.1).
const (
	PromptNone          = "none"
	PromptLogin         = "login"
	PromptConsent       = "consent"
	PromptSelectAccount = "select_account"
)

// hasScope reports whether the space-separated scope holds want.
func hasScope(scope, want string) bool {
	return slices.Contains(strings.Fields(scope), want)
}

// idTokenClaims are the claims of an ID token (Core §2, §3.1.3.6).
type idTokenClaims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience string   `json:"aud"`
	Expiry   int64    `json:"exp"`
	IssuedAt int64    `json:"iat"`
	AuthTime int64    `json:"auth_time"`
	Nonce    string   `json:"nonce,omitempty"`
	ACR      string   `json:"acr,omitempty"`
	AMR      []string `json:"amr,omitempty"`
	ATHash   string   `json:"at_hash"`
	AZP      string   `json:"azp"`
	SID      string   `json:"sid,omitempty"`
}

// idTokenAlg is the algorithm of c's ID tokens: its registered
// id_token_signed_response_alg, else RS256.
func idTokenAlg(c *Client) string {
	if c.IDTokenAlg != "" {
		return c.IDTokenAlg
	}
	return keys.RS256
}

// atHash is the at_hash of an access token (Core §3.1.3.6): the left half
// of its SHA-256, base64url. RS256 and ES256 both hash with SHA-256.
func atHash(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

// idToken returns the ID token of tokens si issued to client c, or "" when
// their grant has no openid scope. nonce is the authorization request's
// (the code exchange only: a device flow has none, and refreshed ID tokens
// carry none, Core §12.2).
func (s *Server) idToken(ctx context.Context, c *Client, si *identity.SignIn, nonce string) (string, error) {
	if s.keys == nil || si.GrantID == "" || !hasScope(si.Scope, ScopeOpenID) {
		return "", nil
	}
	og, err := s.store.OIDCGrant(ctx, si.GrantID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	now := s.clock()
	claims := idTokenClaims{Issuer: s.issuer, Subject: si.User.ID, Audience: c.ID, Expiry: now.Add(IDTokenTTL).Unix(), IssuedAt: now.Unix(),
		AuthTime: og.AuthTime.Unix(), Nonce: nonce, ACR: og.ACR, AMR: og.AMR, ATHash: atHash(si.AccessToken), AZP: c.ID, SID: si.SessionID}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return s.keys.Sign(ctx, idTokenAlg(c), payload)
}

// recordOIDC records, for an openid grant, how the person approving it had
// authenticated: every ID token of the grant says so.
func (s *Server) recordOIDC(ctx context.Context, grantID, scope string, lvl gatehouse.Assurance, authTime time.Time) error {
	if !hasScope(scope, ScopeOpenID) {
		return nil
	}
	if authTime.IsZero() {
		authTime = s.clock()
	}
	l := lvl.Level(gatehouse.ViaPassword)
	amr := l.AMR
	if amr == nil {
		amr = []string{}
	}
	return s.store.CreateOIDCGrant(ctx, &OIDCGrant{GrantID: grantID, AuthTime: authTime.UTC(), AMR: amr, ACR: l.AAL})
}

// idTokenHint is what an id_token_hint names: its subject, session (sid)
// and audience (with azp when there are several).
type idTokenHint struct {
	sub, sid, azp string
	aud           []string
}

// errHint is an id_token_hint refused.
var errHint = errors.New("id_token_hint is not an ID token issued by this server")

// parseHint checks an id_token_hint, for authorize (Core §3.1.2.1) and
// RP-initiated logout alike: a JWS signed, RS256 or ES256, by a key the
// ring still publishes (its kid and algorithm), issued by this issuer
// about a user. Its expiry is ignored: a hint is an ID token the relying
// party got earlier. Which client it must name is the caller's rule.
func (s *Server) parseHint(ctx context.Context, raw string) (*idTokenHint, error) {
	c, err := s.ownIDToken(ctx, raw)
	if err != nil {
		return nil, err
	}
	return &idTokenHint{sub: c.Subject, sid: c.SID, azp: c.AZP, aud: c.Audience}, nil
}

// ownClaims are the claims ownIDToken reads.
type ownClaims struct {
	jwt.Claims
	AZP string `json:"azp"`
	SID string `json:"sid"`
}

// ownIDToken checks that raw is an ID token of this server (a JWS signed,
// RS256 or ES256, by a key the ring still publishes, issued by this
// issuer about a user, with an audience) and returns its claims; errHint
// otherwise. Its expiry is the caller's to check.
func (s *Server) ownIDToken(ctx context.Context, raw string) (*ownClaims, error) {
	if s.keys == nil {
		return nil, errHint
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil || len(tok.Headers) != 1 {
		return nil, errHint
	}
	if t, _ := tok.Headers[0].ExtraHeaders[jose.HeaderType].(string); t != "" && t != "JWT" {
		return nil, errHint // a logout token or an ID-JAG is not an ID token
	}
	set, err := s.keys.PublicKeys(ctx)
	if err != nil {
		return nil, err
	}
	ks := set.Key(tok.Headers[0].KeyID)
	if len(ks) != 1 || ks[0].Algorithm != tok.Headers[0].Algorithm {
		return nil, errHint
	}
	var c ownClaims
	if err := tok.Claims(ks[0].Key, &c); err != nil {
		return nil, errHint
	}
	if c.Issuer != s.issuer || !gatehouse.IsID(c.Subject) || len(c.Audience) == 0 {
		return nil, errHint
	}
	return &c, nil
}

// userInfo is the UserInfo answer (Core §5.3.2): sub, and the claims of
// the scopes granted.
type userInfo struct {
	Subject       string `json:"sub"`
	Name          string `json:"name,omitempty"`
	Picture       string `json:"picture,omitempty"`
	Email         string `json:"email,omitempty"`
	EmailVerified *bool  `json:"email_verified,omitempty"`
}

// bearerError writes an RFC 6750 §3 error: the challenge and an OAuth
// error body.
func (s *Server) bearerError(w http.ResponseWriter, r *http.Request, status int, code, desc, scope string) {
	ch := fmt.Sprintf(`Bearer error="%s", error_description="%s"`, code, descriptionText(desc))
	if scope != "" {
		ch += fmt.Sprintf(`, scope="%s"`, scope)
	}
	w.Header().Set("WWW-Authenticate", ch)
	s.writeError(w, r, oauthErr(code, status, "%s", desc))
}

// HandleUserInfo handles "GET /oauth/userinfo" and "POST /oauth/userinfo"
// (Core §5.3) behind the kernel's authed wrapper: the bearer access token
// must come from an OAuth grant whose scope has openid.
func (s *Server) HandleUserInfo(k Kernel) http.Handler {
	inner := k.Authed(func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
		w.Header().Del("WWW-Authenticate")
		ctx := r.Context()
		if p.Via != gatehouse.ViaOAuth || p.SessionID == "" {
			s.bearerError(w, r, http.StatusUnauthorized, "invalid_token", "not an access token of an OAuth grant", "")
			return nil
		}
		st := s.store.Identity()
		sess, err := st.SessionByID(ctx, p.SessionID)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (sess.GrantID == "" || sess.RevokedAt != nil)) {
			s.bearerError(w, r, http.StatusUnauthorized, "invalid_token", "the token's grant is gone", "")
			return nil
		}
		if err != nil {
			s.writeError(w, r, serverError(err))
			return nil
		}
		g, err := st.GrantByID(ctx, sess.GrantID)
		if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && g.RevokedAt != nil) {
			s.bearerError(w, r, http.StatusUnauthorized, "invalid_token", "the token's grant is gone", "")
			return nil
		}
		if err != nil {
			s.writeError(w, r, serverError(err))
			return nil
		}
		if !hasScope(g.Scope, ScopeOpenID) {
			s.bearerError(w, r, http.StatusForbidden, "insufficient_scope", "the grant's scope has no openid", ScopeOpenID)
			return nil
		}
		u, err := st.UserByID(ctx, p.UserID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			s.bearerError(w, r, http.StatusUnauthorized, "invalid_token", "the account is gone", "")
			return nil
		}
		if err != nil {
			s.writeError(w, r, serverError(err))
			return nil
		}
		out := userInfo{Subject: u.ID}
		if hasScope(g.Scope, ScopeProfile) {
			out.Name, out.Picture = u.Name, u.AvatarURL
		}
		if hasScope(g.Scope, ScopeEmail) {
			verified := u.EmailVerified
			out.Email, out.EmailVerified = u.Email, &verified
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		writeBody(w, out)
		return nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cors(w)
		// The kernel answers a missing, invalid, expired or revoked token
		// 401 before the handler runs: RFC 6750's challenge goes with it.
		if r.Header.Get("Authorization") != "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer`)
		}
		inner.ServeHTTP(w, r)
	})
}
