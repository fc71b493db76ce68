package webhooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// TestWebhooksPerWorkspace: a workspace registers at most
// webhooks.PerWorkspace webhooks of a tool, 409 past it, whoever creates
// them and however many at once; another workspace, or the other tool,
// is not counted.
func TestWebhooksPerWorkspace(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		hook := map[string]any{"url": rc.URL + "/h"}
		for range webhooks.PerWorkspace - 2 {
			env.Do(t, "POST", "/links/v1/webhooks", owner.Token, hook).Want(t, 200)
		}
		// The last two places, asked for five times at once.
		ok := 0
		for _, r := range testenv.AtOnceAnswers(5, func(int) *testenv.Resp {
			return env.Do(t, "POST", "/links/v1/webhooks", owner.Token, hook)
		}) {
			switch r.Status {
			case 200:
				ok++
			case 409:
				if !strings.Contains(r.Str("error"), "per workspace") {
					t.Errorf("409 says %q; want it to name the limit per workspace", r.Str("error"))
				}
			default:
				t.Errorf("status %d: %s; want 200 or 409", r.Status, r.Body)
			}
		}
		if ok != 2 {
			t.Errorf("%d of 5 creations at once past %d webhooks succeeded; want 2", ok, webhooks.PerWorkspace-2)
		}
		if n := len(env.Do(t, "GET", "/links/v1/webhooks", owner.Token, nil).Want(t, 200).Get("webhooks").([]any)); n != webhooks.PerWorkspace {
			t.Errorf("%d webhooks listed; want %d", n, webhooks.PerWorkspace)
		}
		// Sign counts per workspace too, across its members (10 each).
		for range webhooks.PerWorkspace / 10 {
			m := env.Join(t, owner, org, "member")
			for range 10 {
				env.Do(t, "POST", "/sign/v1/webhooks", m.Token, hook).Want(t, 200)
			}
		}
		env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, hook).Want(t, 409)
		other, _ := env.Team(t)
		env.Do(t, "POST", "/links/v1/webhooks", other.Token, hook).Want(t, 200)
	})
}

// TestDeliveryHandshakeTimeout: a receiver that accepts the connection and
// never completes the TLS handshake fails a try after about
// webhooks.HandshakeTimeout (3 s), not the whole 10 s delivery timeout,
// so such a tarpit holds a worker a short while; the retry follows.
func TestDeliveryHandshakeTimeout(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		pit := testenv.NewTarpit(t)
		owner, _ := env.Team(t)
		env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": pit.URL + "/h"}).Want(t, 200)
		env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200)
		tries := pit.Accepted
		for end := time.Now().Add(15 * time.Second); len(tries()) < 2 && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		got := tries()
		if len(got) < 2 {
			t.Fatalf("%d tries in 15 s; want a retry after the handshake timed out", len(got))
		}
		if gap := got[1].Sub(got[0]); gap < webhooks.HandshakeTimeout-500*time.Millisecond || gap > 2*webhooks.HandshakeTimeout {
			t.Errorf("the first try held the connection %v before the retry; want about %v (the TLS handshake timeout)", gap.Round(time.Millisecond), webhooks.HandshakeTimeout)
		}
	})
}
