package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactPercentile is the reference: nearest rank over sorted samples.
func exactPercentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[nearestRank(p, uint64(len(sorted)))-1]
}

func TestNearestRank(t *testing.T) {
	tests := []struct {
		p    float64
		n    uint64
		want uint64
	}{
		{50, 1, 1},
		{99, 1, 1},
		{50, 10, 5},
		{99, 10, 10},
		{50, 11, 6},
		{99, 100, 99},
		{99, 101, 100},
		{100, 7, 7},
		{0.001, 7, 1},
	}
	for _, tt := range tests {
		if got := nearestRank(tt.p, tt.n); got != tt.want {
			t.Errorf("nearestRank(%v, %d) = %d, want %d", tt.p, tt.n, got, tt.want)
		}
	}
}

func TestPercentileSmallValuesExact(t *testing.T) {
	h := newHistogram()
	// 1..100 ns: below exactLimit every bucket holds a single value.
	for v := 100; v >= 1; v-- {
		h.record(time.Duration(v))
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{1, 1},
		{50, 50},
		{99, 99},
		{99.9, 100},
		{100, 100},
	}
	for _, tt := range tests {
		if got := h.percentile(tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got, want := h.mean(), time.Duration(50); got != want { // 5050/100 = 50.5, truncated
		t.Errorf("mean = %v, want %v", got, want)
	}
}

func TestPercentileEmpty(t *testing.T) {
	h := newHistogram()
	if got := h.percentile(99); got != 0 {
		t.Errorf("p99 of empty = %v, want 0", got)
	}
	if got := h.mean(); got != 0 {
		t.Errorf("mean of empty = %v, want 0", got)
	}
}

func TestPercentileSingleValue(t *testing.T) {
	h := newHistogram()
	h.record(1234567 * time.Nanosecond)
	for _, p := range []float64{1, 50, 99, 100} {
		if got, want := h.percentile(p), 1234567*time.Nanosecond; got != want {
			t.Errorf("p%v = %v, want %v (clamped to the one value)", p, got, want)
		}
	}
}

func TestPercentileWithinBucketError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	distributions := map[string]func() time.Duration{
		// Request latencies: log-normal around 1 ms with a long tail.
		"lognormal": func() time.Duration {
			return time.Duration(math.Exp(rng.NormFloat64()*1.2) * float64(time.Millisecond))
		},
		"uniform 0-50ms": func() time.Duration {
			return time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
		},
		// Mostly fast with a few slow outliers, as under lock contention.
		"bimodal": func() time.Duration {
			if rng.IntN(100) < 3 {
				return 2*time.Second + time.Duration(rng.Int64N(int64(time.Second)))
			}
			return 200*time.Microsecond + time.Duration(rng.Int64N(int64(100*time.Microsecond)))
		},
	}
	for name, next := range distributions {
		t.Run(name, func(t *testing.T) {
			h := newHistogram()
			samples := make([]time.Duration, 100000)
			for i := range samples {
				samples[i] = next()
				h.record(samples[i])
			}
			slices.Sort(samples)
			for _, p := range []float64{1, 10, 50, 90, 99, 99.9, 100} {
				got, want := h.percentile(p), exactPercentile(samples, p)
				// The bucket top is at most one bucket width above the
				// exact value, never below it.
				if got < want || float64(got-want) > float64(want)/subBuckets+1 {
					t.Errorf("p%v = %v, want %v within %.1f%%", p, got, want, 100.0/subBuckets)
				}
			}
			if got, want := h.percentile(100), samples[len(samples)-1]; got != want {
				t.Errorf("p100 = %v, want max %v", got, want)
			}
		})
	}
}

func TestMergeEqualsSingleHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	all := newHistogram()
	parts := []*histogram{newHistogram(), newHistogram(), newHistogram()}
	for i := range 30000 {
		d := time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
		all.record(d)
		parts[i%len(parts)].record(d)
	}
	merged := newHistogram()
	for _, p := range parts {
		merged.merge(p)
	}
	merged.merge(newHistogram()) // merging an empty one changes nothing
	if merged.count() != all.count() || merged.mean() != all.mean() || merged.min != all.min || merged.max != all.max {
		t.Fatalf("merged n=%d mean=%v min=%v max=%v, want n=%d mean=%v min=%v max=%v",
			merged.count(), merged.mean(), merged.min, merged.max, all.count(), all.mean(), all.min, all.max)
	}
	for _, p := range []float64{50, 99} {
		if got, want := merged.percentile(p), all.percentile(p); got != want {
			t.Errorf("merged p%v = %v, want %v", p, got, want)
		}
	}
}

func TestBucketBoundsRoundTrip(t *testing.T) {
	for i := range bucketCount {
		lo, hi := bucketBounds(i)
		if lo > hi {
			t.Fatalf("bucket %d: lo %d > hi %d", i, lo, hi)
		}
		if got := bucketOf(lo); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", lo, got, i)
		}
		if got := bucketOf(hi); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", hi, got, i)
		}
		if i+1 < bucketCount {
			if next, _ := bucketBounds(i + 1); next != hi+1 {
				t.Fatalf("bucket %d ends at %d but bucket %d starts at %d", i, hi, i+1, next)
			}
		}
	}
	if got := bucketOf(math.MaxInt64); got != bucketCount-1 {
		t.Errorf("bucketOf(MaxInt64) = %d, want the last bucket %d", got, bucketCount-1)
	}
}
