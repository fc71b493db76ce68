// Package token is the access-token format (HS256 JWTs, claims v2 of
// CONTRACT §4), issued and verified through the signing seam
// (keys.Signer, whose keys.Secret holds the HS256 key), and makes the
// opaque secrets of refresh tokens, emailed links and API keys.
package token

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/keys"
)

// Audience is the `aud` of every access token but a pending sign-in's.
const Audience = "gatehouse"

// PendingAudience is the only `aud` of the token of a sign-in that owes
// its second factor: a service verifying tokens as CONTRACT §4 says
// (aud "gatehouse") refuses it, and only Gatehouse's own second-factor
// routes accept it.
const PendingAudience = "gatehouse:mfa"

// Version is the `ver` claim: claims v2.
const Version = 2

// OrgClaim is the `org` claim.
type OrgClaim struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Tools []string `json:"tools"`
}

// Claims is the access-token claim set (claims v2).
type Claims struct {
	jwt.RegisteredClaims
	SessionID string   `json:"sid,omitempty"`
	KeyID     string   `json:"key_id,omitempty"` // the API key a key token was exchanged for
	Org       OrgClaim `json:"org"`
	Via       string   `json:"via"`
	Ver       int      `json:"ver"`
	// AAL and AMR are the assurance level and the methods presented (RFC
	// 8176); MFA is "pending" while the session owes its second factor.
	AAL string   `json:"aal,omitempty"`
	AMR []string `json:"amr,omitempty"`
	MFA string   `json:"mfa,omitempty"`
	// Scope is the scope granted to an OAuth token (RFC 9068 §2.2.3):
	// space-separated, absent when none was asked for.
	Scope string `json:"scope,omitempty"`
}

// MFAPending is the `mfa` claim of a session that owes its second factor.
const MFAPending = "pending"

// MarshalJSON writes the claims with a lone audience as a string: CONTRACT
// §4 gives `aud` as "gatehouse", and clients compare it to that string (RFC
// 7519 allows both). Tokens bound to resources (RFC 8707) carry an array.
// The JWT library's own choice is a package global, left untouched here.
func (c Claims) MarshalJSON() ([]byte, error) {
	var aud any
	switch len(c.Audience) {
	case 0:
	case 1:
		aud = c.Audience[0]
	default:
		aud = []string(c.Audience)
	}
	r := c.RegisteredClaims
	return json.Marshal(struct {
		Issuer    string           `json:"iss,omitempty"`
		Subject   string           `json:"sub,omitempty"`
		Audience  any              `json:"aud,omitempty"`
		ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
		NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
		IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
		ID        string           `json:"jti,omitempty"`
		SessionID string           `json:"sid,omitempty"`
		KeyID     string           `json:"key_id,omitempty"`
		Org       OrgClaim         `json:"org"`
		Via       string           `json:"via"`
		Ver       int              `json:"ver"`
		AAL       string           `json:"aal,omitempty"`
		AMR       []string         `json:"amr,omitempty"`
		MFA       string           `json:"mfa,omitempty"`
		Scope     string           `json:"scope,omitempty"`
	}{r.Issuer, r.Subject, aud, r.ExpiresAt, r.NotBefore, r.IssuedAt, r.ID, c.SessionID, c.KeyID, c.Org, c.Via, c.Ver, c.AAL, c.AMR, c.MFA, c.Scope})
}

// Alg is the algorithm of every access token: HS256 under the secret of
// spec section 5 (keys.Secret), whatever else the signer holds.
const Alg = keys.HS256

// Issue signs claims for subject valid from now for ttl through s (with
// Alg), issued by issuer. The registered claims are filled in here; the
// caller sets sid, org and via, and may set Audience to resources (RFC
// 8707) that are added after "gatehouse". A token owing its second factor
// (MFA pending) has PendingAudience alone.
func Issue(ctx context.Context, s keys.Signer, issuer string, c Claims, subject string, now time.Time, ttl time.Duration) (string, time.Time, error) {
	exp := now.Add(ttl).Truncate(time.Second)
	aud := jwt.ClaimStrings{Audience}
	for _, a := range c.Audience {
		if a != "" && a != Audience && a != PendingAudience {
			aud = append(aud, a)
		}
	}
	if c.MFA == MFAPending {
		aud = jwt.ClaimStrings{PendingAudience}
	}
	c.RegisteredClaims = jwt.RegisteredClaims{
		Issuer:    issuer,
		Subject:   subject,
		Audience:  aud,
		ExpiresAt: jwt.NewNumericDate(exp),
		IssuedAt:  jwt.NewNumericDate(now),
		ID:        uuid.NewString(),
	}
	c.Ver = Version
	if c.Org.Tools == nil {
		c.Org.Tools = []string{}
	}
	// MarshalJSON directly: json.Marshal would copy and check its
	// (already compact and escaped) output once more.
	payload, err := c.MarshalJSON()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign access token: %w", err)
	}
	signed, err := s.Sign(ctx, Alg, payload)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign access token: %w", err)
	}
	return signed, exp, nil
}

// Verify checks raw's signature through s (Alg only: a token the ring
// signed, such as an ID token, is never an access token), its issuer,
// audience ("gatehouse" or PendingAudience) and expiry at now (required;
// valid while now is before it, and not before nbf when one is given),
// and returns its claims.
func Verify(ctx context.Context, s keys.Signer, issuer string, now time.Time, raw string) (*Claims, error) {
	payload, err := s.Verify(ctx, Alg, raw)
	if err != nil {
		return nil, err
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("access token claims: %w", err)
	}
	switch {
	case c.ExpiresAt == nil:
		return nil, errors.New("access token without exp")
	case !now.Before(c.ExpiresAt.Time):
		return nil, errors.New("access token expired")
	case c.NotBefore != nil && now.Before(c.NotBefore.Time):
		return nil, errors.New("access token not valid yet")
	case c.Issuer != issuer:
		return nil, errors.New("access token of another issuer")
	case !slices.Contains(c.Audience, Audience) && !slices.Contains(c.Audience, PendingAudience):
		return nil, errors.New("access token of another audience")
	}
	if c.Ver != Version || c.Subject == "" || c.Org.ID == "" {
		return nil, errors.New("not a v2 access token")
	}
	if !slices.Contains(c.Audience, Audience) {
		// Only a pending sign-in's audience: it owes its factor, whatever
		// its other claims say.
		c.MFA = MFAPending
	}
	return &c, nil
}

// NewSecret returns prefix followed by 256 bits of randomness in URL-safe
// base64 (43 characters).
func NewSecret(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Hash returns the SHA-256 hex digest under which a high-entropy secret is
// stored. A fast hash is right here: the secrets carry 256 bits of entropy.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
