// Package password hashes and checks passwords with argon2id, encoded in the
// PHC string format so parameters can be raised later and old hashes
// upgraded at the next sign-in.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
	KeyLen  uint32
	SaltLen uint32
}

// OWASP is the OWASP-recommended argon2id configuration (m=19 MiB, t=2, p=1).
var OWASP = Params{Memory: 19 * 1024, Time: 2, Threads: 1, KeyLen: 32, SaltLen: 16}

// Hasher hashes and verifies passwords, running at most a fixed number of
// hashes at once so that memory stays bounded under a sign-in flood.
type Hasher struct {
	params  Params
	slots   chan struct{}
	dummy   string
	waiting atomic.Int64
	maxWait int64
}

// ErrBusy means too many hashes are already queued: the caller should shed
// the request rather than wait seconds for a slot.
var ErrBusy = errors.New("password hasher busy")

// queuePerSlot bounds the waiting hashes: past 128 per slot (about 3 s of
// work at 25 ms a hash) new requests are refused at once.
const queuePerSlot = 128

// NewHasher returns a Hasher with params that runs at most concurrency hashes
// at once (0 means one per CPU).
func NewHasher(params Params, concurrency int) *Hasher {
	if concurrency <= 0 {
		concurrency = runtime.GOMAXPROCS(0)
	}
	h := &Hasher{params: params, slots: make(chan struct{}, concurrency), maxWait: int64(concurrency * queuePerSlot)}
	h.dummy = h.encode(make([]byte, params.SaltLen), make([]byte, params.KeyLen), params)
	return h
}

// Waiting is how many hashes wait for a slot now.
func (h *Hasher) Waiting() int { return int(h.waiting.Load()) }

// Saturated reports whether the queue of waiting hashes is full: new ones
// are refused with ErrBusy.
func (h *Hasher) Saturated() bool { return h.waiting.Load() >= h.maxWait }

// Hash returns the PHC-encoded argon2id hash of pw.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, h.params.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key, err := h.derive(ctx, pw, salt, h.params)
	if err != nil {
		return "", err
	}
	return h.encode(salt, key, h.params), nil
}

// Verify reports whether pw matches encoded and whether encoded should be
// replaced by a fresh hash because its parameters are below the current
// ones. An empty encoded (no password set) is checked against a dummy hash so
// the answer takes the same time as a real check.
func (h *Hasher) Verify(ctx context.Context, pw, encoded string) (ok, rehash bool, err error) {
	if encoded == "" {
		encoded = h.dummy
		defer func() { ok, rehash = false, false }()
	}
	p, salt, want, err := decode(encoded)
	if err != nil {
		return false, false, err
	}
	got, err := h.derive(ctx, pw, salt, p)
	if err != nil {
		return false, false, err
	}
	ok = subtle.ConstantTimeCompare(got, want) == 1
	rehash = p.Memory < h.params.Memory || p.Time < h.params.Time || p.Threads < h.params.Threads || uint32(len(want)) < h.params.KeyLen
	return ok, rehash, nil
}

func (h *Hasher) derive(ctx context.Context, pw string, salt []byte, p Params) ([]byte, error) {
	select {
	case h.slots <- struct{}{}:
	default:
		if h.waiting.Add(1) > h.maxWait {
			h.waiting.Add(-1)
			return nil, ErrBusy
		}
		select {
		case h.slots <- struct{}{}:
			h.waiting.Add(-1)
		case <-ctx.Done():
			h.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	defer func() { <-h.slots }()
	return argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, p.KeyLen), nil
}

func (h *Hasher) encode(salt, key []byte, p Params) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

var errFormat = errors.New("password hash: unknown format")

func decode(encoded string) (Params, []byte, []byte, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return Params{}, nil, nil, errFormat
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Params{}, nil, nil, errFormat
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, errFormat
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return Params{}, nil, nil, errFormat
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Params{}, nil, nil, errFormat
	}
	p.KeyLen, p.SaltLen = uint32(len(key)), uint32(len(salt))
	return p, salt, key, nil
}
