package sign

import (
	"time"

	"github.com/gatehouse/gatehouse"
)

// sweep is a periodic pass over due documents: list returns up to
// sweepBatch (id, org) pairs due at now, one handles one of them and says
// whether this call changed it (another instance may have got there
// first). It goes on while full batches come back and returns how many
// documents it changed.
func (s *Service) sweep(what string, list func(now time.Time) ([][2]string, error), one func(id, org string, now time.Time) (bool, error)) (int, error) {
	n := 0
	for {
		now := s.clock.Now()
		due, err := list(now)
		if err != nil {
			return n, gatehouse.Internal(what, err)
		}
		for _, d := range due {
			ok, err := one(d[0], d[1], now)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if len(due) < sweepBatch {
			return n, nil
		}
	}
}
