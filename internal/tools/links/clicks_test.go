package links_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// TestLinkClickBatches checks that the clicks are announced from the
// database, not an instance's memory: one link.clicked event per
// announcement with the clicks since the last one and the running total;
// three announcements at once while visitors click report every click
// once; a fresh service on the same database (a restarted instance)
// announces the clicks an earlier one counted.
func TestLinkClickBatches(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		owner, _ := env.Team(t)
		env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/l", "events": []string{"link.clicked"}}).Want(t, 200)
		link := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200)
		id, code := link.Str("link.id"), link.Str("link.shortCode")
		announce := func() int {
			n, err := env.Links.Announce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for range 3 {
			env.Follow(t, code)
		}
		announce()
		if n := announce(); n != 0 {
			t.Errorf("second announcement queued %d events; want 0", n)
		}

		// Visitors click while three announcements run at once, then a
		// last one takes the rest.
		var events atomic.Int64
		testenv.AtOnce(23, func(i int) {
			if i < 3 {
				n, err := env.Links.Announce(context.Background())
				if err != nil {
					t.Error(err)
				}
				events.Add(int64(n))
				return
			}
			env.Follow(t, code)
		})
		announce()

		// A restarted instance: a new service, nothing in memory.
		for range 2 {
			env.Follow(t, code)
		}
		fresh := links.New(env.SQL.OnQueue(env.Queue).Links(), env.URL+"/l", env.Clock.Now)
		fresh.SetEvents(env.Webhooks.For(webhooks.Links))
		if n, err := fresh.Announce(context.Background()); err != nil || n != 1 {
			t.Errorf("a fresh service announced %d events, %v; want 1", n, err)
		}
		env.Webhooks.Wait()

		got, sum := rc.ClickBatches(t, id)
		// Deliveries are jobs worked concurrently, so they may arrive out of
		// order; the running totals give the order they were announced in.
		slices.SortFunc(got, func(a, b [2]int) int { return a[1] - b[1] })
		last := 0
		for _, b := range got {
			if b[0] <= 0 || b[1] < last+b[0] {
				t.Errorf("batch %v after total %d: want clicks > 0 and a total of at least %d", b, last, last+b[0])
			}
			last = b[1]
		}
		if len(got) < 3 || got[0] != [2]int{3, 3} || got[len(got)-1] != [2]int{2, 25} || sum != 25 || last != 25 {
			t.Errorf("link.clicked batches = %v; want [3 3] first, [2 25] last, 25 clicks in all, each once", got)
		}
		if n := env.Do(t, "GET", "/links/v1/links/"+id, owner.Token, nil).Want(t, 200).Get("link.clicks"); n != float64(25) {
			t.Errorf("clicks = %v; want 25", n)
		}
	})
}
