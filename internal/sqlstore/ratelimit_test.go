package sqlstore_test

import (
	"context"
	"crypto/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// sharedOn returns n Shared of one deployment (scope) on db, as n
// instances would make them, and a frozen clock they all read.
func sharedOn(t *testing.T, db *sqlstore.DB, scope string, n int) ([]*ratelimit.Shared, *testenv.Clock) {
	t.Helper()
	master := make([]byte, 32)
	rand.Read(master)
	out := make([]*ratelimit.Shared, n)
	for i := range out {
		s, err := ratelimit.NewShared(db.Limits(), master, scope, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out, testenv.NewClock()
}

// TestSharedLimits: limiters made by two instances of one deployment
// share their buckets in the database (burst, refill, the wait, Check
// without taking, Reset), another deployment's do not; the table holds
// no raw key; Prune drops only full buckets; a refill faster than a
// second stays in memory.
func TestSharedLimits(t *testing.T) {
	for _, name := range testenv.Databases {
		t.Run(name, func(t *testing.T) {
			db := testenv.OpenDB(t, name)
			s, clock := sharedOn(t, db, "deploy_"+testenv.RandomHex(6), 2)
			const ip = "203.0.113.9"
			a := s[0].New("login", 3, time.Minute, clock.Now)
			b := s[1].New("login", 3, time.Minute, clock.Now)
			for i, l := range []*ratelimit.Limiter{a, b, a} {
				if ok, _ := l.Allow(ip); !ok {
					t.Fatalf("take %d of a burst of 3 refused", i+1)
				}
			}
			for _, l := range []*ratelimit.Limiter{a, b} {
				if ok, wait := l.Allow(ip); ok || wait != time.Minute {
					t.Fatalf("fourth take = %v, wait %v; want refused, wait 1m", ok, wait)
				}
				if ok, _ := l.Check(ip); ok {
					t.Fatal("Check of an empty shared bucket = true")
				}
			}
			for range 3 {
				if ok, _ := b.Check("198.51.100.1"); !ok {
					t.Fatal("Check took a token")
				}
			}
			clock.Advance(time.Minute)
			if ok, _ := b.Allow(ip); !ok {
				t.Fatal("refused after a minute's refill")
			}
			if ok, _ := a.Allow(ip); ok {
				t.Fatal("two takes allowed after one refill")
			}
			other, _ := sharedOn(t, db, "other_"+testenv.RandomHex(6), 1)
			if ok, _ := other[0].New("login", 3, time.Minute, clock.Now).Allow(ip); !ok {
				t.Fatal("another deployment shares the bucket")
			}
			b.Reset(ip)
			for i := range 3 {
				if ok, _ := a.Allow(ip); !ok {
					t.Fatalf("take %d after Reset on the other instance refused", i+1)
				}
			}
			noRawKeys(t, db, ip, "login")

			fast := s[0].New("flood", 1, 100*time.Millisecond, clock.Now)
			before := countLimits(t, db)
			fast.Allow("192.0.2.7")
			if ok, _ := s[1].New("flood", 1, 100*time.Millisecond, clock.Now).Allow("192.0.2.7"); !ok || countLimits(t, db) != before {
				t.Error("a limiter refilling faster than a second went to the database")
			}

			pruned(t, db, a, clock)
		})
	}
}

// pruned checks Prune: a full bucket's row goes, an empty one's stays.
func pruned(t *testing.T, db *sqlstore.DB, l *ratelimit.Limiter, clock *testenv.Clock) {
	t.Helper()
	ctx := context.Background()
	if ok, _ := l.Allow("203.0.113.9"); ok {
		t.Fatal("bucket not empty before prune")
	}
	l.Allow("192.0.2.1") // full again in a minute
	clock.Advance(time.Minute)
	if _, err := db.Limits().Prune(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.DB().QueryRow(`SELECT count(*) FROM rate_limits WHERE tat <= $1`, clock.Now().UnixMicro()).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after Prune %d full buckets left (%v)", left, err)
	}
	if ok, _ := l.Check("203.0.113.9"); !ok {
		t.Fatal("a minute later the empty bucket has no token")
	}
	if ok, _ := l.Allow("203.0.113.9"); !ok {
		t.Fatal("take refused")
	}
	if ok, _ := l.Allow("203.0.113.9"); ok {
		t.Fatal("Prune dropped a bucket that was not full: two takes after one refill")
	}
}

func countLimits(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	var n int
	if err := db.DB().QueryRow(`SELECT count(*) FROM rate_limits`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// noRawKeys fails when a row's key holds any of raw.
func noRawKeys(t *testing.T, db *sqlstore.DB, raw ...string) {
	t.Helper()
	rows, err := db.DB().Query(`SELECT key FROM rate_limits`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		n++
		for _, r := range raw {
			if strings.Contains(k, r) || len(k) != 22 {
				t.Errorf("stored key %q; want a 22-character hash holding none of %q", k, raw)
			}
		}
	}
	if n == 0 {
		t.Error("no row stored")
	}
}

// TestSharedLimitsAtOnce: takes racing on several instances are each
// counted once: 40 at once on a burst of 10 allow exactly 10.
func TestSharedLimitsAtOnce(t *testing.T) {
	for _, name := range testenv.Databases {
		t.Run(name, func(t *testing.T) {
			s, clock := sharedOn(t, testenv.OpenDB(t, name), "race_"+testenv.RandomHex(6), 4)
			var ls []*ratelimit.Limiter
			for _, sh := range s {
				ls = append(ls, sh.New("login", 10, time.Minute, clock.Now))
			}
			var allowed atomic.Int64
			testenv.AtOnce(40, func(i int) {
				if ok, _ := ls[i%4].Allow("203.0.113.9"); ok {
					allowed.Add(1)
				}
			})
			if allowed.Load() != 10 {
				t.Errorf("40 takes at once on 4 instances allowed %d; want 10", allowed.Load())
			}
		})
	}
}

// TestSharedLimitsStoreDown: with the database gone a shared limiter
// still limits, from its own memory, instead of letting everyone in.
func TestSharedLimitsStoreDown(t *testing.T) {
	db := testenv.OpenDB(t, "sqlite")
	s, clock := sharedOn(t, db, "down", 1)
	l := s[0].New("login", 2, time.Minute, clock.Now)
	db.Close()
	for i := range 2 {
		if ok, _ := l.Allow("203.0.113.9"); !ok {
			t.Fatalf("take %d of 2 refused with the store down", i+1)
		}
	}
	if ok, wait := l.Allow("203.0.113.9"); ok || wait <= 0 {
		t.Errorf("third take with the store down = %v, wait %v; want refused from memory", ok, wait)
	}
}
