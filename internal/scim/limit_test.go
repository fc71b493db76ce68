package scim_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScimBearerGuessingLimited: a client IP that keeps presenting wrong
// SCIM tokens is refused with 429, a SCIM error body and Retry-After,
// its right token included while the limit lasts; another IP and the
// directory's own requests are not slowed; the limit lifts with time.
func TestScimBearerGuessingLimited(t *testing.T) {
	t.Parallel()
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		attacker := &directory{env: env.From(t, "127.0.0.21"), token: d.token}

		// Successful requests spend nothing.
		for range 30 {
			attacker.do(t, "GET", "/Users", nil).Want(t, 200)
		}
		guess := &directory{env: attacker.env, token: "scim_" + strings.Repeat("A", 43)}
		for i := range 20 {
			if r := guess.do(t, "GET", "/Users", nil); r.Status != 401 {
				t.Fatalf("guess %d: %d; want 401", i+1, r.Status)
			}
		}
		r := guess.do(t, "GET", "/Users", nil).Want(t, 429)
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After %q; want a number of seconds", r.Header.Get("Retry-After"))
		}
		// No header at all counts too, and the right token is refused
		// from that IP while the limit lasts (a lucky guess is not told).
		(&directory{env: attacker.env}).do(t, "GET", "/Users", nil).Want(t, 429)
		attacker.do(t, "GET", "/Users", nil).Want(t, 429)

		// Another address is not held back.
		(&directory{env: env.From(t, "127.0.0.22"), token: d.token}).do(t, "GET", "/Users", nil).Want(t, 200)

		env.Clock.Advance(3 * time.Second)
		attacker.do(t, "GET", "/Users", nil).Want(t, 200)
	})
}
