// Package clientmeta holds the rules of OAuth client metadata that both
// kinds of registered client share: dynamically registered clients
// (internal/oauth) and workspace applications (internal/workspace), so the
// two check redirect URIs, logout URIs, ID token algorithms and JSON Web
// Key Sets the same way. Its errors are plain: each caller wraps them in its
// own error shape.
package clientmeta

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// MaxURI bounds a URI's length (bytes), as any one OAuth request parameter.
const MaxURI = 2048

// IDTokenAlgs are the algorithms a client may register for its ID tokens;
// the first is the default.
var IDTokenAlgs = []string{"RS256", "ES256"}

// RedirectURI applies RFC 8252 and OAuth 2.1 §2.3.1 as an allow-list:
// https; http only on a loopback host; or a private-use scheme of a native
// app, which must be reverse-domain (RFC 8252 §7.1: it contains a dot), so
// browser schemes such as view-source:, chrome: or javascript: never pass.
// No fragment.
func RedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || len(raw) > MaxURI {
		return fmt.Errorf("redirect URI '%s' is not an absolute URI", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI '%s' must not have a fragment", raw)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI '%s' has no host", raw)
		}
	case scheme == "http":
		if !LoopbackHost(u.Hostname()) {
			return fmt.Errorf("redirect URI '%s': http is allowed only on a loopback host (127.0.0.1, [::1], localhost); use https", raw)
		}
	case privateUseScheme(scheme):
		if u.Host == "" && u.Path == "" && u.Opaque == "" {
			return fmt.Errorf("redirect URI '%s' has no path", raw)
		}
	default:
		return fmt.Errorf("redirect URI '%s': use https, http on a loopback host, or a reverse-domain private-use scheme such as com.example.app:/callback", raw)
	}
	return nil
}

// privateUseScheme reports whether a (lowercased) scheme is reverse-domain:
// dot-separated labels, none empty, e.g. com.example.app.
func privateUseScheme(scheme string) bool {
	if !strings.Contains(scheme, ".") {
		return false
	}
	for _, label := range strings.Split(scheme, ".") {
		if label == "" {
			return false
		}
	}
	return true
}

// LoopbackHost reports whether h is localhost or a loopback IP.
func LoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IDTokenAlg checks id_token_signed_response_alg ("" is the default).
func IDTokenAlg(alg string) error {
	if alg != "" && !slices.Contains(IDTokenAlgs, alg) {
		return fmt.Errorf("id_token_signed_response_alg must be one of %s", strings.Join(IDTokenAlgs, ", "))
	}
	return nil
}

// BackchannelURI checks a back-channel logout URI: an absolute https URL
// (http only on a loopback host) without a fragment or credentials
// (Back-Channel Logout 1.0 §2.2).
func BackchannelURI(raw string) error {
	p, err := url.Parse(raw)
	if err != nil || len(raw) > MaxURI || p.Host == "" || p.Fragment != "" || p.User != nil ||
		!(p.Scheme == "https" || p.Scheme == "http" && LoopbackHost(p.Hostname())) {
		return errors.New("backchannel_logout_uri must be an absolute https URL without a fragment")
	}
	return nil
}

// JWKSURI checks a jwks_uri: an absolute https URL without a fragment or
// credentials.
func JWKSURI(raw string) error {
	p, err := url.Parse(raw)
	if err != nil || len(raw) > MaxURI || p.Scheme != "https" || p.Host == "" || p.Fragment != "" || p.User != nil {
		return errors.New("jwks_uri must be an absolute https URL without a fragment or credentials")
	}
	return nil
}

// Bounds of a client's JSON Web Key Set, inline or fetched.
const (
	MaxJWKSBytes = 16 << 10
	MaxJWKSKeys  = 10
)

// AssertionAlgs are the algorithms a client assertion (RFC 7523) may be
// signed with.
var AssertionAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// ParseJWKS parses a client's JSON Web Key Set and keeps the keys a
// client assertion can be verified with: public RSA keys (2048 bits or
// more) for RS256 and P-256 keys for ES256, for signing. A key with any
// private member, a symmetric key, a set without one usable key, a set
// larger than MaxJWKSBytes or with more than MaxJWKSKeys keys is refused.
func ParseJWKS(b []byte) ([]jose.JSONWebKey, error) {
	if len(b) > MaxJWKSBytes {
		return nil, fmt.Errorf("jwks must be at most %d bytes", MaxJWKSBytes)
	}
	// Private members are looked for in the raw JSON: go-jose would
	// otherwise read them into a private key silently.
	var raw struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := jsonUnmarshal(b, &raw); err != nil || raw.Keys == nil {
		return nil, errors.New("jwks must be a JSON object with a keys array")
	}
	if len(raw.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("jwks may hold at most %d keys", MaxJWKSKeys)
	}
	for _, k := range raw.Keys {
		for _, m := range []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"} {
			if _, ok := k[m]; ok {
				return nil, errors.New("jwks must hold public keys only (a key has private or symmetric members)")
			}
		}
	}
	var set jose.JSONWebKeySet
	if err := jsonUnmarshal(b, &set); err != nil {
		return nil, errors.New("jwks has a key that is not a valid JWK")
	}
	var out []jose.JSONWebKey
	for _, k := range set.Keys {
		if !k.IsPublic() || !k.Valid() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if alg := KeyAlg(k); alg != "" && (k.Algorithm == "" || k.Algorithm == alg) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("jwks has no public RS256 (RSA, 2048 bits or more) or ES256 (P-256) signing key")
	}
	return out, nil
}
