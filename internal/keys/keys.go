// Package keys is the key ring: the asymmetric keys (RS256, ES256) that
// sign what relying parties verify without a shared secret (ID tokens,
// logout tokens), kept in the database with their private halves sealed
// (internal/seal, purpose "signing-keys", bound to the kid), and published
// as a JWK Set at /.well-known/jwks.json.
//
// Every instance reads the ring at start and again every Reload. A key
// added by `gatehouse keys rotate` or by the rotation schedule is published
// at once and signs only Ahead later (two reloads): by then every instance
// has read it, so no instance signs with a key another does not publish
// or verify yet. At that instant the key it replaces stops signing, on
// every instance alike (the instants are in the database, not in each
// instance's reload), and stays published for Keep, longer than anything
// it signed lives; then it leaves the JWK Set.
//
// The ring also holds the access tokens' HS256 keys once one is rotated
// in (hs256.go); until then the configured secret (Config.Secret) signs
// them. Signer is the one seam every token signature goes through: the
// ring (RS256, ES256), its access-token signer (Access, HS256, never
// published) and the two together (Join), which app.New builds and which
// identity, workspace and the JWK Set handler take.
package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/seal"
)

// The algorithms of the ring: RS256 (OpenID Connect requires it) and
// ES256; and HS256, the access tokens' (Secret).
const (
	RS256 = "RS256"
	ES256 = "ES256"
	HS256 = "HS256"
)

// Algs are the ring's algorithms, each with one signing key at all times.
var Algs = []string{RS256, ES256}

const (
	// Keep is how long a rotated key stays published: what it signs lives
	// an hour at most (ID tokens, logout tokens), and relying parties
	// cache a JWK Set for minutes; a day covers both with room to spare.
	Keep = 24 * time.Hour
	// RotateEvery is the age at which the rotation schedule replaces a
	// signing key.
	RotateEvery = 90 * 24 * time.Hour
	// Reload is how often an instance reads the ring again.
	Reload = time.Minute
	// Ahead is how long a rotated-in key is published before it signs:
	// two reloads, so every instance has read it first.
	Ahead = 2 * Reload
	// Purpose is the seal purpose of the private keys.
	Purpose = "signing-keys"
)

// Record is a key as stored.
type Record struct {
	KID, Alg  string
	Public    string // the public key, a JWK
	Private   string // the PKCS#8 private key, sealed (bound to KID), base64
	CreatedAt time.Time
	// CreatedAt is also when the key starts signing (a rotated-in key's
	// is Ahead after its rotation: published before it signs); RetiredAt
	// when it stops signing (nil: it signs on), ExpiresAt when it leaves
	// the JWK Set (nil: it is published).
	RetiredAt, ExpiresAt *time.Time
}

// Store keeps the ring.
type Store interface {
	// SigningKeys returns the keys not expired at now, oldest first.
	SigningKeys(ctx context.Context, now time.Time) ([]Record, error)
	// AddSigningKey adds r unless its alg has a signing key already
	// (then it reports false): instances starting together add one.
	AddSigningKey(ctx context.Context, r Record) (bool, error)
	// RotateSigningKey, in one transaction, retires the signing key of
	// r.Alg at r.CreatedAt (when r starts signing), to expire at expires,
	// and adds r and also
	// (each unless its kid is there); false when a concurrent rotation's
	// key won.
	RotateSigningKey(ctx context.Context, r Record, expires time.Time, also ...Record) (bool, error)
}

// Signer is the seam every token signature goes through: sign with an
// algorithm's current key, verify what was signed, and the public keys
// that let others verify it.
type Signer interface {
	// Sign returns payload as a compact JWS signed with alg's current key,
	// its kid in the header (none for HS256).
	Sign(ctx context.Context, alg string, payload []byte) (string, error)
	// Verify checks that jws is a compact JWS signed with alg by one of
	// the signer's keys (a published one: its kid names it) and returns
	// its payload. The caller names alg, so a token is never accepted
	// under an algorithm it was not meant for (RFC 8725 §3.1): a JWS
	// whose header says otherwise is refused.
	Verify(ctx context.Context, alg, jws string) ([]byte, error)
	// PublicKeys returns the published keys.
	PublicKeys(ctx context.Context) (jose.JSONWebKeySet, error)
	// Algorithms lists the algorithms Sign accepts.
	Algorithms() []string
}

// Config wires a Ring.
type Config struct {
	Store  Store
	Master []byte // GATEHOUSE_ENCRYPTION_KEY (or the generated one)
	Now    func() time.Time
	Logger *slog.Logger
	// Every is how often Run reloads the ring; 0: Reload.
	Every time.Duration
	// Secret is the configured HS256 key of the access tokens
	// (GATEHOUSE_JWT_SECRET or the one kept in the database): the key of
	// record until an HS256 key is rotated onto the ring (Access).
	Secret *Secret
}

// Ring is the loaded key ring.
type Ring struct {
	store Store
	box   *seal.Box
	now   func() time.Time
	log   *slog.Logger
	every time.Duration

	loading sync.Mutex // held by Load
	mu      sync.RWMutex
	signing map[string][]signingKey // by alg: the keys that sign now or later, oldest first
	records []Record                // every key not expired at the last load
	hs      hsKeys                  // the HS256 keys (hs256.go)

	secret   *Secret
	missMu   sync.Mutex // held by reloadOnMiss
	lastMiss time.Time  // the last reload an unknown kid caused
}

type signingKey struct {
	kid         string
	key         crypto.Signer
	from, until time.Time // it signs at from and after, before until (zero: no end)
}

// pick returns the key of ks (oldest first) that signs at now: of those
// not retired at now, the newest whose start has come, else the oldest (a
// key another instance added on first start, its clock a little ahead of
// ours, signs here at once rather than leaving none).
func pick(ks []signingKey, now time.Time) (signingKey, bool) {
	var first signingKey
	found := false
	for i := len(ks) - 1; i >= 0; i-- {
		k := ks[i]
		if !k.until.IsZero() && !now.Before(k.until) {
			continue
		}
		if !now.Before(k.from) {
			return k, true
		}
		first, found = k, true
	}
	return first, found
}

var _ Signer = (*Ring)(nil)

// Open loads the ring, adding the signing key of any algorithm without one.
func Open(ctx context.Context, cfg Config) (*Ring, error) {
	box, err := seal.New(cfg.Master, Purpose)
	if err != nil {
		return nil, err
	}
	r := &Ring{store: cfg.Store, box: box, now: cfg.Now, log: cfg.Logger, every: cfg.Every, secret: cfg.Secret}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.every == 0 {
		r.every = Reload
	}
	if err := r.Load(ctx); err != nil {
		return nil, err
	}
	added := false
	for _, alg := range Algs {
		if r.current(alg) != "" {
			continue
		}
		rec, err := r.generate(alg)
		if err != nil {
			return nil, err
		}
		if _, err := r.store.AddSigningKey(ctx, rec); err != nil {
			return nil, fmt.Errorf("add %s signing key: %w", alg, err)
		}
		added = true
	}
	if added {
		if err := r.Load(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Load reads the ring from the store.
func (r *Ring) Load(ctx context.Context) error {
	r.loading.Lock() // one load at a time: a slow one never overwrites a newer
	defer r.loading.Unlock()
	recs, err := r.store.SigningKeys(ctx, r.now())
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	now := r.now()
	r.mu.RLock()
	opened := map[string]crypto.Signer{}
	for _, ks := range r.signing {
		for _, k := range ks {
			opened[k.kid] = k.key
		}
	}
	r.mu.RUnlock()
	signing := map[string][]signingKey{}
	hs, err := r.loadHS(recs, now)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Alg == HS256 || rec.RetiredAt != nil && !now.Before(*rec.RetiredAt) {
			continue
		}
		key, ok := opened[rec.KID]
		if !ok {
			if key, err = r.open(rec); err != nil {
				return fmt.Errorf("signing key %s: %w", rec.KID, err)
			}
		}
		signing[rec.Alg] = append(signing[rec.Alg], signingKey{kid: rec.KID, key: key, from: rec.CreatedAt, until: until(rec)})
	}
	r.mu.Lock()
	r.signing, r.records, r.hs = signing, recs, hs
	r.mu.Unlock()
	return nil
}

// until is when rec stops signing; zero when it has no end.
func until(rec Record) time.Time {
	if rec.RetiredAt == nil {
		return time.Time{}
	}
	return *rec.RetiredAt
}

// Run reloads the ring every period until ctx ends; a failed load keeps
// the ring as it was and is logged.
func (r *Ring) Run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.Load(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("key ring reload failed", "err", err)
			}
		}
	}
}

// Rotate adds a new signing key for alg (RS256, ES256 or HS256), published
// (HS256: verifying) at once; ahead later (Ahead, or 0 for a key that must
// stop at once, such as a leaked one) it signs and the key it replaces stops
// signing, staying published (HS256: verifying) for Keep after that. It
// returns the new kid.
func (r *Ring) Rotate(ctx context.Context, alg string, ahead time.Duration) (string, error) {
	if !slices.Contains(Algs, alg) && alg != HS256 {
		return "", gatehouse.Invalid("unknown algorithm %q: want one of %v or %s", alg, Algs, HS256)
	}
	if ahead < 0 {
		return "", gatehouse.Invalid("a key cannot sign before it is published")
	}
	rec, err := r.generate(alg)
	if err != nil {
		return "", err
	}
	rec.CreatedAt = rec.CreatedAt.Add(ahead)
	if _, err := r.store.RotateSigningKey(ctx, rec, rec.CreatedAt.Add(Keep), r.secretRetired(alg, rec.CreatedAt)...); err != nil {
		return "", fmt.Errorf("rotate %s: %w", alg, err)
	}
	if err := r.Load(ctx); err != nil {
		return "", err
	}
	return r.current(alg), nil
}

// RotateDue rotates each algorithm whose signing key is RotateEvery old,
// reading the ring first (another instance may have rotated). It returns
// the algorithms rotated.
func (r *Ring) RotateDue(ctx context.Context) ([]string, error) {
	if err := r.Load(ctx); err != nil {
		return nil, err
	}
	due := r.now().Add(-RotateEvery)
	var rotated []string
	r.mu.RLock()
	for _, rec := range r.records {
		if rec.RetiredAt == nil && !rec.CreatedAt.After(due) {
			rotated = append(rotated, rec.Alg)
		}
	}
	r.mu.RUnlock()
	for _, alg := range rotated {
		if _, err := r.Rotate(ctx, alg, Ahead); err != nil {
			return nil, err
		}
	}
	return rotated, nil
}

// Sign implements Signer.
func (r *Ring) Sign(ctx context.Context, alg string, payload []byte) (string, error) {
	return r.SignType(ctx, alg, "JWT", payload)
}

// SignType is Sign with typ as the header's type (logout tokens are
// "logout+jwt", Back-Channel Logout 1.0 §2.4).
func (r *Ring) SignType(ctx context.Context, alg, typ string, payload []byte) (string, error) {
	k, ok := r.signer(alg, r.now())
	if !ok {
		return "", fmt.Errorf("keys: no %s signing key", alg)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: jose.JSONWebKey{Key: k.key, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// PublicKeys implements Signer: every key loaded whose publication has not
// ended at the clock's now (a retired key leaves on time even between
// loads).
func (r *Ring) PublicKeys(ctx context.Context) (jose.JSONWebKeySet, error) {
	now := r.now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, rec := range r.records {
		if rec.Alg == HS256 || rec.ExpiresAt != nil && !now.Before(*rec.ExpiresAt) {
			continue
		}
		var k jose.JSONWebKey
		if err := json.Unmarshal([]byte(rec.Public), &k); err != nil {
			return set, fmt.Errorf("public key %s: %w", rec.KID, err)
		}
		set.Keys = append(set.Keys, k)
	}
	return set, nil
}

// Verify implements Signer: jws must be signed with alg by a key of the
// ring that is published at the clock's now (a retired key verifies
// until it leaves the JWK Set).
func (r *Ring) Verify(_ context.Context, alg, jws string) ([]byte, error) {
	if !slices.Contains(Algs, alg) {
		return nil, fmt.Errorf("keys: no %s keys on the ring", alg)
	}
	obj, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
	if err != nil {
		return nil, err
	}
	if len(obj.Signatures) != 1 {
		return nil, errors.New("keys: not one signature")
	}
	kid := obj.Signatures[0].Header.KeyID
	now := r.now()
	r.mu.RLock()
	var pub string
	for _, rec := range r.records {
		if rec.KID == kid && rec.Alg == alg && (rec.ExpiresAt == nil || now.Before(*rec.ExpiresAt)) {
			pub = rec.Public
		}
	}
	r.mu.RUnlock()
	if pub == "" {
		return nil, fmt.Errorf("keys: unknown %s key %q", alg, kid)
	}
	var k jose.JSONWebKey
	if err := json.Unmarshal([]byte(pub), &k); err != nil {
		return nil, fmt.Errorf("public key %s: %w", kid, err)
	}
	return obj.Verify(k)
}

// Algorithms implements Signer.
func (r *Ring) Algorithms() []string { return slices.Clone(Algs) }

// signer returns alg's key that signs at now (pick).
func (r *Ring) signer(alg string, now time.Time) (signingKey, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return pick(r.signing[alg], now)
}

// current returns the kid of alg's key of record (the one not retired:
// it signs now or will after Ahead), "" when it has none.
func (r *Ring) current(alg string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if alg == HS256 {
		return r.hs.current
	}
	for _, k := range r.signing[alg] {
		if k.until.IsZero() {
			return k.kid
		}
	}
	return ""
}

// generate makes a new key of alg, sealed, created now.
func (r *Ring) generate(alg string) (Record, error) {
	if alg == HS256 {
		return r.generateHS(), nil
	}
	var key crypto.Signer
	var err error
	switch alg {
	case RS256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		err = fmt.Errorf("unknown algorithm %q", alg)
	}
	if err != nil {
		return Record{}, err
	}
	kid := newKID()
	pub, err := json.Marshal(jose.JSONWebKey{Key: key.Public(), KeyID: kid, Algorithm: alg, Use: "sig"})
	if err != nil {
		return Record{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Record{}, err
	}
	sealed := r.box.Seal(der, []byte(kid))
	return Record{KID: kid, Alg: alg, Public: string(pub), Private: base64.StdEncoding.EncodeToString(sealed),
		CreatedAt: r.now()}, nil
}

// newKID returns a random kid: 96 bits, URL-safe base64.
func newKID() string {
	var id [12]byte
	rand.Read(id[:])
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// open unseals rec's private key.
func (r *Ring) open(rec Record) (crypto.Signer, error) {
	sealed, err := base64.StdEncoding.DecodeString(rec.Private)
	if err != nil {
		return nil, err
	}
	der, err := r.box.Open(sealed, []byte(rec.KID))
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("not a signing key")
	}
	return s, nil
}
