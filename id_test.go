package gatehouse

import (
	"testing"
	"time"
)

// A Clock nobody set, or one made from a nil function, reads the real time
// (the binary injects no clock), in UTC at microsecond precision.
func TestClockZeroValue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clock Clock
	}{
		{"zero", Clock{}},
		{"nil function", NewClock(nil)},
		{"field of a zero struct", struct{ c Clock }{}.c},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			got := tc.clock.Now()
			after := time.Now().Add(time.Second)
			if got.Before(before) || got.After(after) {
				t.Errorf("Now() = %v; want about %v", got, time.Now())
			}
			if got.Location() != time.UTC {
				t.Errorf("Now() is in %v; want UTC", got.Location())
			}
			if got.Nanosecond()%1000 != 0 {
				t.Errorf("Now() = %v keeps nanoseconds; want microseconds", got)
			}
		})
	}
}

// An injected clock is read, in UTC at microsecond precision.
func TestClockInjected(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6789, time.FixedZone("x", 3600))
	got := NewClock(func() time.Time { return at }).Now()
	want := time.Date(2030, 1, 2, 2, 4, 5, 6000, time.UTC)
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Now() = %v; want %v", got, want)
	}
}
