package gatehouse

import (
	"time"

	"github.com/google/uuid"
)

// NewID returns a UUIDv7: random enough to be unguessable as an id, and
// ordered by creation, so rows created in the same instant still list in
// the order they were made.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// IsID reports whether s is a UUID string, the form of every id.
func IsID(s string) bool { return uuid.Validate(s) == nil && len(s) == 36 }

// Clock is an injected source of the current time, so tests can hold it
// still. It is a struct, not a function type, so it cannot be called bare:
// the zero Clock, the one a binary that injects nothing leaves in place,
// reads time.Now.
type Clock struct{ now func() time.Time }

// NewClock returns a Clock reading now; a nil now reads time.Now.
func NewClock(now func() time.Time) Clock { return Clock{now: now} }

// Now returns the clock's time in UTC, truncated to the microsecond, the
// precision both databases keep, so a time read back equals the one written.
func (c Clock) Now() time.Time {
	now := c.now
	if now == nil {
		now = time.Now
	}
	return now().UTC().Truncate(time.Microsecond)
}
