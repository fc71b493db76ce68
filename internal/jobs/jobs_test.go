package jobs_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSchedules checks that a Schedule runs every period on a started
// engine and stops with it, on each database.
func TestSchedules(t *testing.T) {
	for _, name := range testenv.Databases {
		t.Run(name, func(t *testing.T) {
			db := testenv.OpenDB(t, name).OnQueue("schedules_" + testenv.RandomHex(4))
			var runs atomic.Int32
			e, err := jobs.New(context.Background(), jobs.Config{DB: db, PollInterval: 20 * time.Millisecond,
				Schedules: []jobs.Schedule{{Name: "tick_" + testenv.RandomHex(4), Every: 500 * time.Millisecond,
					Run: func(context.Context) error { runs.Add(1); return nil }}}})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			for end := time.Now().Add(20 * time.Second); runs.Load() < 2 && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
			}
			if err := e.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := runs.Load(); n < 2 {
				t.Fatalf("%d runs in 20 s; want at least 2 (every 500 ms)", n)
			}
			after := runs.Load()
			time.Sleep(time.Second)
			if n := runs.Load(); n != after {
				t.Errorf("%d runs after Stop; want none", n-after)
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestRescueWindowFloor checks that an engine refuses a rescue window
// under twice the longest job timeout: a job still at work would be taken
// for lost and run a second time at once.
func TestRescueWindowFloor(t *testing.T) {
	db := testenv.OpenDB(t, "sqlite")
	for _, d := range []time.Duration{time.Second, 30 * time.Second, jobs.MinRescueAfter - time.Second} {
		if _, err := jobs.New(context.Background(), jobs.Config{DB: db, RescueAfter: d}); err == nil {
			t.Errorf("rescue window %s accepted; want refused (under %s)", d, jobs.MinRescueAfter)
		}
	}
	if _, err := jobs.New(context.Background(), jobs.Config{DB: db, RescueAfter: jobs.MinRescueAfter}); err != nil {
		t.Errorf("rescue window %s: %v", jobs.MinRescueAfter, err)
	}
}
