package main

import (
	"math"
	"math/bits"
	"time"
)

// histogram records durations in log-linear buckets, in the manner of
// HdrHistogram: values below 2*subBuckets nanoseconds are exact, and every
// larger power-of-two range is split into subBuckets equal parts, so a
// recorded value is known to within 1/subBuckets (1.6%) of itself. Memory
// stays fixed whatever the duration or the request rate, and each worker
// keeps its own histogram so recording takes no lock.
type histogram struct {
	counts []uint64
	n      uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

const (
	subBits    = 6
	subBuckets = 1 << subBits // parts of each power-of-two range
	exactLimit = 2 * subBuckets
	// maxShift is the largest shift bucketOf uses: a positive int64 has at
	// most 63 significant bits.
	maxShift    = 63 - (subBits + 1)
	bucketCount = exactLimit + maxShift*subBuckets
)

func newHistogram() *histogram {
	return &histogram{counts: make([]uint64, bucketCount)}
}

// bucketOf returns the index of the bucket that holds v nanoseconds.
func bucketOf(v int64) int {
	if v < exactLimit {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - (subBits + 1) // >= 1
	m := v >> shift                                // in [subBuckets, 2*subBuckets)
	return exactLimit + (shift-1)*subBuckets + int(m-subBuckets)
}

// bucketBounds returns the smallest and largest value bucket i holds.
func bucketBounds(i int) (lo, hi int64) {
	if i < exactLimit {
		return int64(i), int64(i)
	}
	k := i - exactLimit
	shift := k/subBuckets + 1
	m := int64(k%subBuckets + subBuckets)
	lo = m << shift
	hi = (m+1)<<shift - 1
	return lo, hi
}

// record adds one observation.
func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(int64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// merge adds every observation of o to h.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// count returns the number of observations.
func (h *histogram) count() uint64 { return h.n }

// mean returns the arithmetic mean, exact (not bucketed).
func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100): the
// smallest recorded value that at least p% of the observations do not
// exceed, reported as the top of its bucket and clamped to the observed
// minimum and maximum. It returns 0 for an empty histogram.
func (h *histogram) percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := nearestRank(p, h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketBounds(i)
			v := time.Duration(hi)
			if v > h.max {
				v = h.max
			}
			if v < h.min {
				v = h.min
			}
			return v
		}
	}
	return h.max
}

// nearestRank returns the 1-based rank of the p-th percentile of n ordered
// observations: ceil(p/100 * n), kept within [1, n].
func nearestRank(p float64, n uint64) uint64 {
	r := uint64(math.Ceil(p / 100 * float64(n)))
	if r < 1 {
		r = 1
	}
	if r > n {
		r = n
	}
	return r
}
