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
// still; the zero Clock reads time.Now.
type Clock func() time.Time

// Now returns the clock's time in UTC, truncated to the microsecond, the
// precision both databases keep, so a time read back equals the one written.
func (c Clock) Now() time.Time {
	if c == nil {
		c = time.Now
	}
	return c().UTC().Truncate(time.Microsecond)
}
