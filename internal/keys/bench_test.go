package keys_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// BenchmarkSign times one signature of an ID-token-sized payload by the
// ring's key of each algorithm, as the token endpoint signs an ID token
// (bench/ compares the RS256 figure with the code exchange's cost, see
// BENCHMARKS.md). HS256 is the access tokens' secret, for scale, and
// rsa-raw the bare RSA-2048 PKCS #1 v1.5 signature without go-jose. Each
// reports cpu-ns/op, the process's CPU time per signature, which a machine
// shared with other work inflates less than ns/op (wall time).
func BenchmarkSign(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	payload, err := json.Marshal(map[string]any{
		"iss": env.URL, "sub": "0b6f6d1e-6c55-4f4e-9a57-1d3e2b7c9f10", "aud": "app_0123456789abcdef",
		"exp": 1795000000, "iat": 1794996400, "auth_time": 1794996300, "nonce": "bench-nonce",
		"at_hash": "q1jvFHBkQ4yTTm0N2TkV8w", "azp": "app_0123456789abcdef", "amr": []string{"pwd"},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, alg := range []string{keys.RS256, keys.ES256, keys.HS256} {
		b.Run(alg, func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				if _, err := env.Signer.Sign(ctx, alg, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("rsa-raw", func(b *testing.B) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(payload)
		defer cpuPerOp(b)()
		for b.Loop() {
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuPerOp starts counting the process's CPU time; the function it returns
// reports it per operation as cpu-ns/op.
func cpuPerOp(b *testing.B) func() {
	from := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-from).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
