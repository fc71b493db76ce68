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

// Secret is the HS256 key of the access tokens (spec section 5:
// GATEHOUSE_JWT_SECRET or the secret kept in the database), behind the
// same seam as the ring. Being symmetric it is never published: its
// PublicKeys is empty.
type Secret struct {
	key []byte
}

var _ Signer = (*Secret)(nil)

// hs256Header is the header of every JWS a Secret signs,
// {"alg":"HS256","typ":"JWT"} encoded: the bytes the access tokens have
// always carried.
var hs256Header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

var (
	errMalformed = errors.New("keys: malformed JWS")
	errSignature = errors.New("keys: signature invalid")
)

// NewSecret returns the Secret of key, which must be at least 32 bytes.
func NewSecret(key []byte) (*Secret, error) {
	if len(key) < 32 {
		return nil, errors.New("jwt secret must be at least 32 bytes")
	}
	return &Secret{key: key}, nil
}

// Sign implements Signer for HS256.
func (s *Secret) Sign(_ context.Context, alg string, payload []byte) (string, error) {
	if alg != HS256 {
		return "", fmt.Errorf("keys: the secret signs HS256, not %q", alg)
	}
	b := make([]byte, 0, len(hs256Header)+1+base64.RawURLEncoding.EncodedLen(len(payload))+1+43)
	b = append(b, hs256Header...)
	b = append(b, '.')
	b = base64.RawURLEncoding.AppendEncode(b, payload)
	b = append(b, '.')
	b = base64.RawURLEncoding.AppendEncode(b, s.mac(b[:len(b)-1]))
	return string(b), nil
}

// Verify implements Signer for HS256: three segments, a header whose alg
// is HS256, and the MAC of the first two compared in constant time.
func (s *Secret) Verify(_ context.Context, alg, jws string) ([]byte, error) {
	if alg != HS256 {
		return nil, fmt.Errorf("keys: the secret verifies HS256, not %q", alg)
	}
	head, rest, ok := strings.Cut(jws, ".")
	body, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.IndexByte(sig, '.') >= 0 {
		return nil, errMalformed
	}
	hb, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return nil, errMalformed
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, errMalformed
	}
	if h.Alg != HS256 {
		return nil, fmt.Errorf("keys: JWS signed with %q, want %s", h.Alg, HS256)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return nil, errMalformed
	}
	if !hmac.Equal(got, s.mac([]byte(jws[:len(head)+1+len(body)]))) {
		return nil, errSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, errMalformed
	}
	return payload, nil
}

func (s *Secret) mac(signed []byte) []byte {
	m := hmac.New(sha256.New, s.key)
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
