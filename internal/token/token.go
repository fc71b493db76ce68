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
	"strconv"
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
// It writes what encoding/json writes for the claims (the same members in
// the same order, strings escaped alike; a test holds the two equal)
// without reflection: every sign-in and refresh mints a token.
func (c Claims) MarshalJSON() ([]byte, error) {
	r := c.RegisteredClaims
	w := claimWriter{b: make([]byte, 0, 384)}
	w.b = append(w.b, '{')
	w.str("iss", r.Issuer, true)
	w.str("sub", r.Subject, true)
	switch len(r.Audience) {
	case 0:
	case 1:
		w.str("aud", r.Audience[0], false)
	default:
		w.strs("aud", r.Audience, false)
	}
	if err := w.date("exp", r.ExpiresAt); err != nil {
		return nil, err
	}
	if err := w.date("nbf", r.NotBefore); err != nil {
		return nil, err
	}
	if err := w.date("iat", r.IssuedAt); err != nil {
		return nil, err
	}
	w.str("jti", r.ID, true)
	w.str("sid", c.SessionID, true)
	w.str("key_id", c.KeyID, true)
	w.name("org")
	w.b = append(w.b, '{')
	w.str("id", c.Org.ID, false)
	w.str("role", c.Org.Role, false)
	w.strs("tools", c.Org.Tools, false)
	w.b = append(w.b, '}')
	w.str("via", c.Via, false)
	w.name("ver")
	w.b = strconv.AppendInt(w.b, int64(c.Ver), 10)
	w.str("aal", c.AAL, true)
	w.strs("amr", c.AMR, true)
	w.str("mfa", c.MFA, true)
	w.str("scope", c.Scope, true)
	return append(w.b, '}'), nil
}

// claimWriter appends the members of JSON objects to b.
type claimWriter struct{ b []byte }

// name writes a member's name (a plain one: no escaping), after a comma
// unless it is its object's first.
func (w *claimWriter) name(n string) {
	if w.b[len(w.b)-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, n...)
	w.b = append(w.b, '"', ':')
}

// str writes member n with string v, unless omitEmpty and v is "".
func (w *claimWriter) str(n, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	w.name(n)
	w.b = appendJSONString(w.b, v)
}

// strs writes member n with array v (null when nil), unless omitEmpty
// and v is empty.
func (w *claimWriter) strs(n string, v []string, omitEmpty bool) {
	if omitEmpty && len(v) == 0 {
		return
	}
	w.name(n)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// date writes member n with d as the JWT library writes it (whole seconds
// at its default precision), unless d is nil.
func (w *claimWriter) date(n string, d *jwt.NumericDate) error {
	if d == nil {
		return nil
	}
	if jwt.TimePrecision >= time.Second {
		w.name(n)
		w.b = strconv.AppendInt(w.b, d.Truncate(jwt.TimePrecision).Unix(), 10)
		return nil
	}
	v, err := d.MarshalJSON()
	if err != nil {
		return err
	}
	w.name(n)
	w.b = append(w.b, v...)
	return nil
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: a string of printable ASCII without '"', '\\', '<', '>' or
// '&' is copied; any other is left to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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
	c, ok := readClaims(payload)
	if !ok {
		c = Claims{}
		if err := json.Unmarshal(payload, &c); err != nil {
			return nil, fmt.Errorf("access token claims: %w", err)
		}
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
