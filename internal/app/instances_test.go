package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// window is the click window of the three instances and the period of
// their Sign reminder and purge sweeps: short, so that the leader's
// schedules run several times during the test.
const window = 300 * time.Millisecond

// TestThreeInstances runs three services on one PostgreSQL database and
// one job queue, as three instances of a deployment: 200 webhook events
// queued across them are each delivered once; three expiry sweeps at once,
// one per instance, fire document.expired once; clicks taken on all three
// are announced by the one leader's schedule, each click once, with the
// right running totals; the link_clicks, sign_remind and sign_purge
// schedules each run about once per period, not once per instance.
// PostgreSQL only: SQLite is one file with one
// writer per process, not a database several instances share.
func TestThreeInstances(t *testing.T) {
	rc := testenv.NewReceiver(t)
	queue := "test_" + testenv.RandomHex(6)
	var in [3]*testenv.Env
	for i := range in {
		in[i] = testenv.New(t, "postgres", testenv.Options{RootCAs: rc.Roots(), JobQueue: queue,
			LinkEventsWindow: window, SignSweepEvery: window})
	}
	start := time.Now()
	a := in[0]
	// Each instance is its own issuer here (its test URL), so the owner
	// signs in on each.
	owner := a.Register(t)
	tokens := [3]string{owner.Token}
	for i := 1; i < 3; i++ {
		tokens[i] = in[i].Login(t, owner.Email, owner.Password).Want(t, 200).Str("access_token")
	}
	a.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/links", "events": []string{"link.created", "link.clicked"}}).Want(t, 200)
	a.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/sign"}).Want(t, 200)

	// 200 events, queued by the three instances in turn.
	var code, linkID string
	for i := range 200 {
		l := in[i%3].Do(t, "POST", "/links/v1/links", tokens[i%3], map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200)
		code, linkID = l.Str("link.shortCode"), l.Str("link.id")
	}
	a.Webhooks.Wait()
	ids := map[string]int{}
	for _, d := range rc.Events("link.created") {
		ids[d.ID]++
	}
	if n := len(rc.Events("link.created")); n != 200 || len(ids) != 200 {
		t.Errorf("link.created: %d deliveries of %d delivery ids; want 200 of 200", n, len(ids))
	}

	expiryOnce(t, in, rc, owner.Token)
	clicksOnce(t, in, rc, code, linkID)

	schedulesOnce(t, a, queue, time.Since(start))
}

// schedulesOnce counts the runs of each short-period schedule in the
// queue's job table: one enqueuer (River's elected leader) makes about
// elapsed/window runs, three would make about three times as many; a
// change of leader may add a few. Every run but the last two must have
// completed.
func schedulesOnce(t *testing.T, a *testenv.Env, queue string, elapsed time.Duration) {
	t.Helper()
	most := int(elapsed/window)*3/2 + 3
	for _, name := range []string{"link_clicks", "sign_remind", "sign_purge"} {
		var runs, done int
		if err := a.SQL.DB().QueryRow(`SELECT count(*), count(*) FILTER (WHERE state = 'completed') FROM river_job
			WHERE queue = $1 AND kind = 'schedule' AND args->>'name' = $2`, queue, name).Scan(&runs, &done); err != nil {
			t.Fatal(err)
		}
		if runs == 0 || runs > most {
			t.Errorf("%s ran %d times in %v; want 1 to %d (once per period, not once per instance)", name, runs, elapsed, most)
		}
		// The last runs may still be at work or their completion not yet
		// written (River completes in batches, up to 250 ms apart).
		if done < runs-2 {
			t.Errorf("%s: %d of %d runs completed", name, done, runs)
		}
	}
}

// expiryOnce has each instance sweep at once for a document that has
// expired: one document.expired, delivered once.
func expiryOnce(t *testing.T, in [3]*testenv.Env, rc *testenv.Receiver, token string) {
	t.Helper()
	a := in[0]
	doc := map[string]any{"name": "Due", "expiresAt": a.Clock.Now().Add(5 * time.Minute).Format(time.RFC3339),
		"recipients": []map[string]any{{"name": "Ada", "email": "ada@example.com"}}}
	id := a.CreateDocument(t, token, testenv.TestPDF, doc).Want(t, 200).Str("document.id")
	a.Do(t, "POST", "/sign/v1/documents/"+id+"/send", token, nil).Want(t, 200)
	for _, e := range in {
		e.Clock.Advance(5 * time.Minute)
	}
	var expired atomic.Int64
	testenv.AtOnce(3, func(i int) {
		n, err := in[i].Sign.ExpireDue(context.Background())
		if err != nil {
			t.Error(err)
		}
		expired.Add(int64(n))
	})
	if expired.Load() != 1 {
		t.Errorf("three instances' sweeps expired %d documents; want 1", expired.Load())
	}
	a.Webhooks.Wait()
	if got := len(rc.Events("document.expired")); got != 1 {
		t.Errorf("document.expired delivered %d times; want 1", got)
	}
}

// clicksOnce clicks on all three instances and waits for the leader's
// schedule to announce every click.
func clicksOnce(t *testing.T, in [3]*testenv.Env, rc *testenv.Receiver, code, linkID string) {
	t.Helper()
	const each = 10
	testenv.AtOnce(3*each, func(i int) { in[i%3].Follow(t, code) })
	var batches [][2]int
	sum := 0
	for end := time.Now().Add(20 * time.Second); sum < 3*each && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		batches, sum = rc.ClickBatches(t, linkID)
	}
	in[0].Webhooks.Wait()
	batches, sum = rc.ClickBatches(t, linkID)
	last := 0
	for _, b := range batches {
		if b[0] <= 0 || b[1] < last+b[0] {
			t.Errorf("batch %v after a total of %d", b, last)
		}
		last = b[1]
	}
	if sum != 3*each || last != 3*each {
		t.Errorf("link.clicked batches %v: %d clicks, total %d; want %d announced once", batches, sum, last, 3*each)
	}
}
