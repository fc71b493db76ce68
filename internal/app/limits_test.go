package app_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// deployment starts three instances of one deployment on the shared
// PostgreSQL database: one job queue, one clock (frozen, so no bucket
// refills during the test), abuse limits on.
func deployment(t *testing.T) [3]*testenv.Env {
	t.Helper()
	a := testenv.New(t, "postgres", testenv.Options{RateLimit: true, JobQueue: "test_" + testenv.RandomHex(6)})
	return [3]*testenv.Env{a, a.Another(t), a.Another(t)}
}

// TestLimitsAcrossInstances: the abuse limits hold for the deployment,
// not per process. Sign-ins from one IP spread over three instances get
// the burst of one instance's login limiter in all, then 429; ten wrong
// passwords for one account spread over them lock it everywhere, as ten
// on one instance do. PostgreSQL only: SQLite's file is one process's, whose
// limits are in memory.
func TestLimitsAcrossInstances(t *testing.T) {
	t.Run("login per IP", func(t *testing.T) {
		in := deployment(t)
		burst := identity.LimitLogin.Burst
		allowed := 0
		for i := range burst + 3*3 {
			// A new address each time: the per-account lockout stays out of it.
			r := in[i%3].Login(t, testenv.Email(), "wrong password 1")
			switch r.Status {
			case 401:
				allowed++
			case 429:
			default:
				t.Fatalf("sign-in %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		if allowed != burst {
			t.Errorf("three instances allowed %d sign-ins from one IP; want %d, one instance's burst", allowed, burst)
		}
	})
	t.Run("login per account", func(t *testing.T) {
		in := deployment(t)
		acc := in[0].Register(t)
		for i := range 10 {
			in[i%3].Login(t, acc.Email, "wrong password 1").Want(t, 401)
		}
		for i, e := range in {
			if r := e.Login(t, acc.Email, acc.Password); r.Status != 429 {
				t.Errorf("instance %d: the right password after ten wrong ones on three instances = %d; want 429 (locked)", i, r.Status)
			}
		}
	})
}
