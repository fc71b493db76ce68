package jobs_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// hooks registers n Links webhooks of token's workspace at url, for
// link.created.
func hooks(t *testing.T, env *testenv.Env, token, url string, n int) {
	t.Helper()
	for range n {
		env.Do(t, "POST", "/links/v1/webhooks", token, map[string]any{"url": url, "events": []string{"link.created"}}).Want(t, 200)
	}
}

// links creates n links in token's workspace.
func links(t *testing.T, env *testenv.Env, token string, n int) {
	t.Helper()
	for range n {
		env.Do(t, "POST", "/links/v1/links", token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200)
	}
}

// TestMailOnItsOwnQueue: a mail job lands on the mail queue beside the
// service's queue (<queue>_mail), which has workers of its own; webhook
// deliveries stay on the service's queue.
func TestMailOnItsOwnQueue(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		hooks(t, env, owner.Token, rc.URL+"/h", 1)
		links(t, env, owner.Token, 1)
		env.MagicToken(t, owner.Email)
		env.Webhooks.Wait()
		rows, err := env.Store.DB().Query(`SELECT kind, queue FROM river_job WHERE queue IN ($1, $2)`, env.Queue, env.Queue+"_mail")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		seen := map[string]bool{}
		for rows.Next() {
			var kind, queue string
			if err := rows.Scan(&kind, &queue); err != nil {
				t.Fatal(err)
			}
			seen[kind] = true
			want := env.Queue
			if kind == "mail" {
				want = env.Queue + "_mail"
			}
			if queue != want {
				t.Errorf("a %s job on queue %q; want %q", kind, queue, want)
			}
		}
		if !seen["mail"] || !seen[webhooks.DeliveryKind] {
			t.Errorf("job kinds seen %v; want mail and %s", seen, webhooks.DeliveryKind)
		}
	})
}

// TestMailNotStarvedByWebhooks is the starvation case of the faults
// suite: one workspace's 50 webhooks point at a receiver that reads each
// request and holds it for hangFor, with hundreds of deliveries queued,
// more than the engine has workers; another workspace's sign-in link
// still reaches the mail sink within one hold. Before mail had its own
// queue it waited behind the deliveries, each holding a worker for the
// whole hold, rounds of them. With three instances on one PostgreSQL
// database too. The bound is a hold (hangFor), not a speed: a loaded
// two-core machine under -race delivers in 0.1 to 3.3 s.
func TestMailNotStarvedByWebhooks(t *testing.T) {
	for _, instances := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d instances", instances), func(t *testing.T) {
			// httptest's servers share one certificate: rc's roots trust hang.
			rc := testenv.NewReceiver(t)
			o := testenv.Options{RootCAs: rc.Roots()}
			if instances > 1 {
				o.JobQueue = "starve_" + testenv.RandomHex(4)
			}
			testenv.RunWith(t, o, func(t *testing.T, env *testenv.Env) {
				if instances > 1 && env.DB != "postgres" {
					t.Skip("instances share a job queue on PostgreSQL")
				}
				for range instances - 1 {
					env.Another(t)
				}
				hang := newHangingReceiver(t)
				flood, _ := env.Team(t)
				hooks(t, env, flood.Token, hang.URL+"/hook", webhooks.PerWorkspace)
				// 50 webhooks x 3 (x instances) links: more deliveries than
				// every instance's workers together.
				links(t, env, flood.Token, 3*instances)
				other, _ := env.Team(t)
				env.WaitMail(t) // the registration mails
				start := time.Now()
				env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": other.Email}).Want(t, 200)
				env.Mail.WaitFor(t, other.Email, 2*hangFor)
				for len(env.MailTexts(other.Email, testenv.MagicLink)) == 0 && time.Since(start) < 2*hangFor {
					time.Sleep(10 * time.Millisecond)
				}
				took := time.Since(start)
				t.Logf("sign-in link at the sink after %v", took.Round(time.Millisecond))
				if took > hangFor {
					t.Errorf("the sign-in link took %v to reach the mail sink behind a webhook flood; want under a hold, %v", took.Round(time.Millisecond), hangFor)
				}
			})
		})
	}
}

// hangingReceiver is an HTTPS receiver that completes TLS, reads the
// request and answers only after hangFor, counting the requests it holds
// at once, in all and per first path segment.
type hangingReceiver struct {
	URL     string
	srv     *httptest.Server
	mu      sync.Mutex
	now     map[string]int
	most    map[string]int
	release chan struct{}
}

// hangFor is how long a hangingReceiver holds a request: just under the
// service's 10 s delivery timeout, so that every held delivery ends by
// the receiver's answer.
const hangFor = 9 * time.Second

func newHangingReceiver(t *testing.T) *hangingReceiver {
	h := &hangingReceiver{now: map[string]int{}, most: map[string]int{}, release: make(chan struct{})}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		h.add(seg, 1)
		defer h.add(seg, -1)
		// It answers before the service gives up (10 s), so that the
		// delivery ends after the count here goes down: a request the
		// service abandoned would stay counted until the server noticed.
		select {
		case <-r.Context().Done():
		case <-h.release:
		case <-time.After(hangFor):
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	h.srv.StartTLS()
	h.URL = h.srv.URL
	// Before the service stops (cleanups run last first): its deliveries
	// held here end at once, and the server closes without waiting.
	t.Cleanup(func() {
		close(h.release)
		h.srv.Close()
	})
	return h
}

func (h *hangingReceiver) add(seg string, d int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range []string{"", seg} {
		h.now[k] += d
		h.most[k] = max(h.most[k], h.now[k])
	}
}

// mostAtOnce is the most requests held at once under path segment seg
// ("": all).
func (h *hangingReceiver) mostAtOnce(seg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.most[seg]
}

// TestDeliveriesInFlightBounded: three workspaces' 300 deliveries to one
// receiver that never answers hold at most InFlightPerWorkspace workers
// per workspace and InFlightPerHost per receiver on an instance, so that
// a fourth workspace's delivery to another receiver goes within one hold
// rather than after rounds of them (the deliveries past the bounds are
// tried again later, without counting a failed try). The bound is a
// hold, not a speed: a loaded two-core machine under -race takes up to
// 4.5 s on SQLite (behind the snoozing of the deliveries queued before
// it, one SQLite write each), 0.1 s on PostgreSQL.
func TestDeliveriesInFlightBounded(t *testing.T) {
	// httptest's servers share one certificate: rc's roots trust hang.
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		hang := newHangingReceiver(t)
		const workspaces, each = 3, webhooks.PerWorkspace
		prefix := testenv.RandomHex(3)
		for i := range workspaces {
			owner, _ := env.Team(t)
			hooks(t, env, owner.Token, fmt.Sprintf("%s/%s%d/hook", hang.URL, prefix, i), each)
			links(t, env, owner.Token, 2)
		}
		// Every worker that may take one is now held by the receiver.
		waitFor(3*time.Second, func() bool { return hang.mostAtOnce("") >= webhooks.InFlightPerHost })
		other, _ := env.Team(t)
		hooks(t, env, other.Token, rc.URL+"/other", 1)
		start := time.Now()
		links(t, env, other.Token, 1)
		if !waitFor(2*hangFor, func() bool { return len(rc.Events("link.created")) > 0 }) {
			t.Fatal("another workspace's delivery to another receiver never arrived")
		}
		took := time.Since(start)
		t.Logf("the other workspace's delivery arrived after %v", took.Round(time.Millisecond))
		if took > hangFor {
			t.Errorf("another workspace's delivery took %v behind a receiver that holds each request %v; want under one hold", took.Round(time.Millisecond), hangFor)
		}
		if most := hang.mostAtOnce(""); most > webhooks.InFlightPerHost {
			t.Errorf("%d deliveries at once to one receiver; want at most %d", most, webhooks.InFlightPerHost)
		}
		for i := range workspaces {
			if most := hang.mostAtOnce(fmt.Sprintf("%s%d", prefix, i)); most > webhooks.InFlightPerWorkspace {
				t.Errorf("workspace %d: %d deliveries at once; want at most %d", i, most, webhooks.InFlightPerWorkspace)
			}
		}
	})
}

// waitFor polls ok every 10 ms for up to d.
func waitFor(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}
