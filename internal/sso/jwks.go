package sso

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// JWKSMinInterval is the shortest time between two reads of a
// connection's JWK Set: a token naming a key id we do not hold makes us
// read it again, but a flood of them reads it at most once per interval.
const JWKSMinInterval = 30 * time.Second

// jwsAlgs are the signature algorithms a provider's key set may verify;
// the verifier narrows them to what the provider announces.
var jwsAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// keySet is a provider's JWK Set for go-oidc's verifier (oidc.KeySet),
// read on first use and again for a key id it does not hold (or a
// signature no key verifies), at most once per JWKSMinInterval: unlike
// go-oidc's RemoteKeySet, which reads on every miss.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time
	algs   []string // as the provider announces them

	fetch sync.Mutex // one read at a time
	mu    sync.Mutex
	keys  []jose.JSONWebKey
	read  time.Time // zero: never read
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, jwsAlgs)
	if err != nil {
		return nil, err
	}
	return k.verify(ctx, jws)
}

// verify is jws's payload when one of the provider's keys verifies its
// one signature, the set read again (reread) when none of the keys held
// does.
func (k *keySet) verify(ctx context.Context, jws *jose.JSONWebSignature) ([]byte, error) {
	if len(jws.Signatures) != 1 {
		return nil, errors.New("not one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	keys, err := k.reread(ctx)
	if err != nil {
		return nil, err
	}
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	return nil, errors.New("no key of the provider verifies the signature")
}

// verifyWith is jws's payload when a key of keys with its kid (any key
// when it names none) verifies it.
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) ([]byte, bool) {
	for _, key := range keys {
		if kid == "" || key.KeyID == kid {
			if payload, err := jws.Verify(&key); err == nil {
				return payload, true
			}
		}
	}
	return nil, false
}

// reread reads the key set again unless it was read (or tried) within
// JWKSMinInterval; the keys held either way.
func (k *keySet) reread(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.fetch.Lock()
	defer k.fetch.Unlock()
	k.mu.Lock()
	keys, read := k.keys, k.read
	k.mu.Unlock()
	now := k.now()
	if !read.IsZero() && now.Sub(read) < JWKSMinInterval {
		return keys, nil
	}
	k.mu.Lock()
	k.read = now // a failed read counts too: a provider that is down is not hammered
	k.mu.Unlock()
	fresh, err := k.get(ctx)
	if err != nil {
		return keys, err
	}
	k.mu.Lock()
	k.keys = fresh
	k.mu.Unlock()
	return fresh, nil
}

// get GETs the key set.
func (k *keySet) get(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read jwks: %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, fmt.Errorf("read jwks: %w", err)
	}
	keys := []jose.JSONWebKey{}
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) == nil { // a key of a type we do not know is skipped
			keys = append(keys, key)
		}
	}
	return keys, nil
}

// allows reports whether the provider signs with alg: one it announces
// (RS256 when it announces none, as go-oidc's verifier assumes) that
// we verify.
func (k *keySet) allows(alg string) bool {
	if !slices.Contains(jwsAlgs, jose.SignatureAlgorithm(alg)) {
		return false
	}
	if len(k.algs) == 0 {
		return alg == string(jose.RS256)
	}
	return slices.Contains(k.algs, alg)
}

// verifier is an ID token verifier for c's provider, its signatures
// checked against the provider's key set read at most once per
// JWKSMinInterval (keySet), with the algorithms the provider announces.
func (s *Service) verifier(ctx context.Context, c *Connection, cfg *oidc.Config) (*oidc.IDTokenVerifier, error) {
	ks, err := s.keySet(ctx, c)
	if err != nil {
		return nil, err
	}
	conf := *cfg
	for _, a := range ks.algs {
		if slices.Contains(jwsAlgs, jose.SignatureAlgorithm(a)) {
			conf.SupportedSigningAlgs = append(conf.SupportedSigningAlgs, a)
		}
	}
	return oidc.NewVerifier(c.Issuer, ks, &conf), nil
}

// keySet is the kept key set of c's provider (made with the cached
// provider, whose discovery names its JWK Set and algorithms).
func (s *Service) keySet(ctx context.Context, c *Connection) (*keySet, error) {
	p, err := s.provider(ctx, c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	cp := s.providers[c.ID]
	ks := cp.keys
	if ks == nil || cp.p != p {
		var meta struct {
			JWKS string   `json:"jwks_uri"`
			Algs []string `json:"id_token_signing_alg_values_supported"`
		}
		p.Claims(&meta)
		ks = &keySet{url: meta.JWKS, client: s.client, now: s.Now, algs: meta.Algs}
		if cp.p == p {
			cp.keys = ks
			s.providers[c.ID] = cp
		}
	}
	s.mu.Unlock()
	return ks, nil
}
