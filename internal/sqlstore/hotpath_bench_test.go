package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// These benchmarks measure the CPU of SQLite's hot write paths per
// operation (cpu-ns/op: the process's user and system time, which counts
// the work on every goroutine, unlike ns/op, which also counts the waits
// that form the groups); BENCHMARKS.md has the figures.

func openBench(b *testing.B) *sqlstore.DB { return open(b, testenv.FreshURL(b, "sqlite")) }

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTxGroup runs transactions of one INSERT in groups of 16 (the
// writer held while they queue), per transaction.
func BenchmarkTxGroup(b *testing.B) {
	db := openBench(b)
	if _, err := db.DB().Exec(`CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		b.Fatal(err)
	}
	const size = 16
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for round := 0; round*size < b.N; round++ {
		release := db.HoldWriter()
		var wg sync.WaitGroup
		for i := range size {
			wg.Go(func() {
				err := db.InTx(ctx, func(exec func(ctx context.Context, query string, args ...any) error) error {
					return exec(ctx, `INSERT INTO t (k) VALUES ($1)`, fmt.Sprint(round, "-", i))
				})
				if err != nil {
					b.Error(err)
				}
			})
		}
		for db.TxsWaiting() != size {
			time.Sleep(50 * time.Microsecond)
		}
		release()
		wg.Wait()
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkRefreshBatch rotates 16 sessions' tokens in one batch, per
// refresh.
func BenchmarkRefreshBatch(b *testing.B) {
	db := openBench(b)
	st := db.Identity()
	a := testenv.New(b, "sqlite", testenv.Options{DB: db}).Register(b)
	const size = 16
	// A batch runs under its leader's context, which has a deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	now := time.Now()
	sids, hashes := make([]string, size), make([]string, size)
	for i := range size {
		ss := &identity.Session{ID: uuid.NewString(), UserID: a.UserID, Via: "password", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			LastUsedAt: now, RefreshHash: testenv.RandomHex(32)}
		if err := st.CreateSession(ctx, ss); err != nil {
			b.Fatal(err)
		}
		sids[i], hashes[i] = ss.ID, ss.RefreshHash
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for round := 0; round*size < b.N; round++ {
		next := make([]*identity.RefreshToken, size)
		for i := range next {
			next[i] = &identity.RefreshToken{Hash: testenv.RandomHex(32), SessionID: sids[i], CreatedAt: time.Now()}
		}
		_, errs := st.RefreshAll(ctx, sids, hashes, next, policy)
		for i, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
			hashes[i] = next[i].Hash
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkPasskeyOwner reads a passkey's owner by credential id (a
// passkey sign-in's one read before its transaction).
func BenchmarkPasskeyOwner(b *testing.B) {
	db := openBench(b)
	st := db.Identity()
	a := testenv.New(b, "sqlite", testenv.Options{DB: db}).Register(b)
	ctx, cancel := context.WithCancel(context.Background()) // as a request's
	defer cancel()
	cred := []byte("bench-credential")
	pk := &identity.Passkey{ID: uuid.NewString(), UserID: a.UserID, CredentialID: cred, PublicKey: []byte{1}, Name: "bench", CreatedAt: time.Now()}
	if err := st.CreatePasskey(ctx, pk); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for range b.N {
		if _, err := st.PasskeyOwner(ctx, cred); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}
