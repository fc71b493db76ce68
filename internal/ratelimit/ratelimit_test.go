package ratelimit

import (
	"testing"
	"time"
)

func TestBurstThenRefill(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(3, time.Minute, func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d refused inside the burst", i+1)
		}
	}
	ok, wait := l.Allow("a")
	if ok {
		t.Fatal("fourth request allowed; want refused")
	}
	if wait <= 0 || wait > time.Minute {
		t.Fatalf("retry after = %v; want within (0, 1m]", wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key was refused")
	}
	now = now.Add(time.Minute)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refused after a refill period")
	}
}

func TestCheckDoesNotConsume(t *testing.T) {
	l := New(1, time.Hour, nil)
	for range 5 {
		if ok, _ := l.Check("k"); !ok {
			t.Fatal("Check consumed the token")
		}
	}
	l.Allow("k")
	if ok, _ := l.Check("k"); ok {
		t.Fatal("Check after the bucket emptied = true")
	}
}

func TestNilAllowsAll(t *testing.T) {
	var l *Limiter
	if ok, _ := l.Allow("x"); !ok {
		t.Fatal("nil limiter refused")
	}
}

func TestResetFillsTheBucket(t *testing.T) {
	l := New(2, time.Hour, nil)
	l.Allow("k")
	l.Allow("k")
	l.Allow("j")
	l.Allow("j")
	l.Reset("k")
	for i := range 2 {
		if ok, _ := l.Allow("k"); !ok {
			t.Fatalf("request %d after Reset refused; want the full burst", i+1)
		}
	}
	if ok, _ := l.Check("j"); ok {
		t.Fatal("Reset of k filled j too")
	}
	var nilLimiter *Limiter
	nilLimiter.Reset("k")
}
