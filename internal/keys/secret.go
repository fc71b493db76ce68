package keys

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// Secret is the configured HS256 key of the access tokens (spec section
// 5: GATEHOUSE_JWT_SECRET or the secret kept in the database), behind the
// same seam as the ring. Its kid is derived from it (SecretKID), so every
// instance configured alike names it alike. Being symmetric it is never
// published: its PublicKeys is empty. A ring opened with it signs with it
// until an HS256 key is rotated in (Ring.Access).
type Secret struct {
	key []byte
	kid string
	hdr string // the JWS header it signs with, encoded
}

var _ Signer = (*Secret)(nil)

var (
	errMalformed = errors.New("keys: malformed JWS")
	errSignature = errors.New("keys: signature invalid")
)

// NewSecret returns the Secret of key, which must be at least 32 bytes.
func NewSecret(key []byte) (*Secret, error) {
	if len(key) < 32 {
		return nil, errors.New("jwt secret must be at least 32 bytes")
	}
	kid := SecretKID(key)
	return &Secret{key: key, kid: kid, hdr: hs256Header(kid)}, nil
}

// SecretKID is the kid of a configured secret: 96 bits of its SHA-256
// under a label of ours. It tells no more of the secret than any token it
// signs already does (an HS256 MAC can be tried against guesses as well).
func SecretKID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("gatehouse hs256 kid\n"))
	h.Write(key)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// KID returns the secret's kid.
func (s *Secret) KID() string { return s.kid }

// hs256Header returns the header of every HS256 JWS under kid,
// {"alg":"HS256","kid":…,"typ":"JWT"} encoded.
func hs256Header(kid string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"` + kid + `","typ":"JWT"}`))
}

// Sign implements Signer for HS256.
func (s *Secret) Sign(_ context.Context, alg string, payload []byte) (string, error) {
	if alg != HS256 {
		return "", fmt.Errorf("keys: the secret signs HS256, not %q", alg)
	}
	return signHS(s.hdr, s.key, payload), nil
}

// Verify implements Signer for HS256: a JWS without kid (issued before
// kids) or with the secret's.
func (s *Secret) Verify(_ context.Context, alg, jws string) ([]byte, error) {
	if alg != HS256 {
		return nil, fmt.Errorf("keys: the secret verifies HS256, not %q", alg)
	}
	p, err := parseHS(jws)
	if err != nil {
		return nil, err
	}
	if p.kid != "" && p.kid != s.kid {
		return nil, fmt.Errorf("keys: unknown %s key %q", HS256, p.kid)
	}
	return p.check(s.key)
}

// signHS returns payload signed with key as a compact JWS of header hdr.
func signHS(hdr string, key, payload []byte) string {
	b := make([]byte, 0, len(hdr)+1+base64.RawURLEncoding.EncodedLen(len(payload))+1+43)
	b = append(b, hdr...)
	b = append(b, '.')
	b = base64.RawURLEncoding.AppendEncode(b, payload)
	b = append(b, '.')
	b = base64.RawURLEncoding.AppendEncode(b, mac(key, b[:len(b)-1]))
	return string(b)
}

// parsedHS is a compact JWS whose header says HS256, not yet verified.
type parsedHS struct {
	kid          string
	signed, body string
	sig          []byte
}

// parseHS splits jws: three segments, a header whose alg is HS256 (none,
// RS256 or any other is refused here, RFC 8725 §3.1) and its kid.
func parseHS(jws string) (parsedHS, error) {
	head, rest, ok := strings.Cut(jws, ".")
	body, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.IndexByte(sig, '.') >= 0 {
		return parsedHS{}, errMalformed
	}
	hb, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return parsedHS{}, errMalformed
	}
	var h struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return parsedHS{}, errMalformed
	}
	if h.Alg != HS256 {
		return parsedHS{}, fmt.Errorf("keys: JWS signed with %q, want %s", h.Alg, HS256)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return parsedHS{}, errMalformed
	}
	return parsedHS{kid: h.Kid, signed: jws[:len(head)+1+len(body)], body: body, sig: got}, nil
}

// check compares p's MAC under key in constant time and returns its payload.
func (p parsedHS) check(key []byte) ([]byte, error) {
	if !hmac.Equal(p.sig, mac(key, []byte(p.signed))) {
		return nil, errSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(p.body)
	if err != nil {
		return nil, errMalformed
	}
	return payload, nil
}

func mac(key, signed []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(signed)
	return m.Sum(nil)
}

// PublicKeys implements Signer: none, a shared secret is never published.
func (s *Secret) PublicKeys(context.Context) (jose.JSONWebKeySet, error) {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}, nil
}

// Algorithms implements Signer.
func (s *Secret) Algorithms() []string { return []string{HS256} }

// joined is Join's Signer.
type joined struct {
	by   map[string]Signer // each algorithm's signer
	all  []Signer
	algs []string
}

// Join returns one Signer over ss: Sign and Verify go to the first of ss
// whose Algorithms lists the algorithm (read once, here), PublicKeys
// gathers every one's, Algorithms lists them all.
func Join(ss ...Signer) Signer {
	j := &joined{by: map[string]Signer{}, all: ss}
	for _, s := range ss {
		for _, alg := range s.Algorithms() {
			if _, ok := j.by[alg]; !ok {
				j.by[alg] = s
				j.algs = append(j.algs, alg)
			}
		}
	}
	return j
}

func (j *joined) Sign(ctx context.Context, alg string, payload []byte) (string, error) {
	s, ok := j.by[alg]
	if !ok {
		return "", fmt.Errorf("keys: no %s signing key", alg)
	}
	return s.Sign(ctx, alg, payload)
}

func (j *joined) Verify(ctx context.Context, alg, jws string) ([]byte, error) {
	s, ok := j.by[alg]
	if !ok {
		return nil, fmt.Errorf("keys: no %s keys", alg)
	}
	return s.Verify(ctx, alg, jws)
}

func (j *joined) PublicKeys(ctx context.Context) (jose.JSONWebKeySet, error) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, s := range j.all {
		ks, err := s.PublicKeys(ctx)
		if err != nil {
			return set, err
		}
		set.Keys = append(set.Keys, ks.Keys...)
	}
	return set, nil
}

func (j *joined) Algorithms() []string { return append([]string(nil), j.algs...) }
