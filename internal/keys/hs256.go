package keys

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// MissReload is how often at most an access token naming a kid the ring
// does not know makes it read the ring again: a key rotated on another
// instance verifies here before the next Reload, and forged kids cost one
// read per MissReload, not one per request.
const MissReload = 10 * time.Second

// hsKeys is the ring's HS256 state at a load.
type hsKeys struct {
	current string            // kid of the HS256 key of record; "" while the configured secret is
	keys    map[string][]byte // every HS256 key loaded, by kid
	signing []signingKey      // the ring's keys that sign now or later, oldest first (key unset)
	// secretUntil is when the configured secret stops signing once a
	// ring key is of record (its retirement row); zero: no row loaded.
	secretUntil time.Time
}

// hsKey is a loaded HS256 key.
type hsKey struct {
	kid, hdr string
	key      []byte
}

// loadHS opens the HS256 keys of recs at now. A row without a private key
// marks the configured secret of its kid retired (secretRetired).
func (r *Ring) loadHS(recs []Record, now time.Time) (hsKeys, error) {
	hs := hsKeys{keys: map[string][]byte{}}
	for _, rec := range recs {
		if rec.Alg != HS256 {
			continue
		}
		if rec.Private == "" {
			if r.secret != nil && rec.KID == r.secret.kid {
				hs.secretUntil = until(rec)
			}
			continue
		}
		sealed, err := base64.StdEncoding.DecodeString(rec.Private)
		if err != nil {
			return hs, fmt.Errorf("signing key %s: %w", rec.KID, err)
		}
		key, err := r.box.Open(sealed, []byte(rec.KID))
		if err != nil {
			return hs, fmt.Errorf("signing key %s: %w", rec.KID, err)
		}
		hs.keys[rec.KID] = key
		if rec.RetiredAt == nil {
			hs.current = rec.KID
		}
		if rec.RetiredAt == nil || now.Before(*rec.RetiredAt) {
			hs.signing = append(hs.signing, signingKey{kid: rec.KID, from: rec.CreatedAt, until: until(rec)})
		}
	}
	return hs, nil
}

// generateHS makes a new HS256 key: 256 random bits, sealed, created now.
func (r *Ring) generateHS() Record {
	var key [32]byte
	rand.Read(key[:])
	kid := newKID()
	return Record{KID: kid, Alg: HS256, Private: base64.StdEncoding.EncodeToString(r.box.Seal(key[:], []byte(kid))),
		CreatedAt: r.now()}
}

// secretRetired returns, for an HS256 rotation while the configured secret
// is still the HS256 key of record, the row that retires it at at: it then verifies for Keep,
// longer than any access token lives, and not after. Nothing of the
// secret is stored but its kid.
func (r *Ring) secretRetired(alg string, at time.Time) []Record {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if alg != HS256 || r.secret == nil || r.hs.current != "" {
		return nil
	}
	expires := at.Add(Keep)
	return []Record{{KID: r.secret.kid, Alg: HS256, CreatedAt: at, RetiredAt: &at, ExpiresAt: &expires}}
}

// signingHS returns the HS256 key that signs at now: the ring's newest
// whose time has come, else the configured secret while it is the key of
// record or until its retirement (a rotated-in key signs Ahead after its
// rotation).
func (r *Ring) signingHS(now time.Time) (hsKey, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := pick(r.hs.signing, now)
	// The secret signs while it is the key of record, or until its
	// retirement; a ring key whose start has come is newer.
	secret := r.secret != nil && (r.hs.current == "" || now.Before(r.hs.secretUntil))
	switch {
	case ok && (!now.Before(k.from) || !secret):
		return hsKey{kid: k.kid, hdr: hs256Header(k.kid), key: r.hs.keys[k.kid]}, true
	case secret:
		return hsKey{kid: r.secret.kid, hdr: r.secret.hdr, key: r.secret.key}, true
	}
	return hsKey{}, false
}

// verifyingHS returns the HS256 key named kid that verifies at now: a
// ring key not expired, or the configured secret (kid "" is a token issued
// before kids, or its own) while it is the key of record or retired less
// than Keep ago.
func (r *Ring) verifyingHS(kid string, now time.Time) ([]byte, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.secret != nil && (kid == "" || kid == r.secret.kid) {
		if r.hs.current == "" {
			return r.secret.key, true
		}
		kid = r.secret.kid
	}
	for _, rec := range r.records {
		if rec.KID != kid || rec.Alg != HS256 || rec.ExpiresAt != nil && !now.Before(*rec.ExpiresAt) {
			continue
		}
		if rec.Private == "" { // the retired secret's row
			if r.secret == nil || r.secret.kid != kid {
				return nil, false
			}
			return r.secret.key, true
		}
		key, ok := r.hs.keys[kid]
		return key, ok
	}
	return nil, false
}

// reloadOnMiss reads the ring again for a kid it does not know, at most
// once per MissReload.
func (r *Ring) reloadOnMiss(ctx context.Context) {
	r.missMu.Lock()
	defer r.missMu.Unlock()
	now := r.now()
	if !r.lastMiss.IsZero() && now.Sub(r.lastMiss) < MissReload {
		return
	}
	r.lastMiss = now
	if err := r.Load(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("key ring reload failed", "err", err)
	}
}

// Access returns the access tokens' signer (HS256 only): it signs with
// the HS256 key of record (the ring's newest, else the configured secret)
// with its kid in the header, and verifies a token under the key its kid
// names; a kid the ring does not know reads the ring again (reloadOnMiss).
// The ring's own Sign and Verify never take HS256, so what signs ID and
// logout tokens cannot sign an access token.
func (r *Ring) Access() Signer { return access{r} }

type access struct{ r *Ring }

func (a access) Sign(_ context.Context, alg string, payload []byte) (string, error) {
	if alg != HS256 {
		return "", fmt.Errorf("keys: access tokens are HS256, not %q", alg)
	}
	k, ok := a.r.signingHS(a.r.now())
	if !ok {
		return "", fmt.Errorf("keys: no %s signing key", HS256)
	}
	return signHS(k.hdr, k.key, payload), nil
}

func (a access) Verify(ctx context.Context, alg, jws string) ([]byte, error) {
	if alg != HS256 {
		return nil, fmt.Errorf("keys: access tokens are HS256, not %q", alg)
	}
	p, err := parseHS(jws)
	if err != nil {
		return nil, err
	}
	key, ok := a.r.verifyingHS(p.kid, a.r.now())
	if !ok && p.kid != "" {
		a.r.reloadOnMiss(ctx)
		key, ok = a.r.verifyingHS(p.kid, a.r.now())
	}
	if !ok {
		return nil, fmt.Errorf("keys: unknown %s key %q", HS256, p.kid)
	}
	return p.check(key)
}

func (access) PublicKeys(context.Context) (jose.JSONWebKeySet, error) {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}, nil
}

func (access) Algorithms() []string { return []string{HS256} }
