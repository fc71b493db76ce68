package webhooks_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestDeliveriesKeepConnections: deliveries to one receiver reuse their
// connections: waves of 20 events open about one wave's worth, not one
// per delivery (Go's default transport keeps only 2 idle per host, which
// made nearly every delivery a new TLS handshake under load).
func TestDeliveriesKeepConnections(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		owner, _ := env.Team(t)
		env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/h", "events": []string{"link.created"}}).Want(t, 200)
		before := rc.Conns()
		const waves, per = 3, 20
		for w := 1; w <= waves; w++ {
			testenv.AtOnce(per, func(int) {
				env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200)
			})
			for end := time.Now().Add(20 * time.Second); len(rc.Events("link.created")) < w*per && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
			if n := len(rc.Events("link.created")); n < w*per {
				t.Fatalf("%d deliveries after wave %d; want %d", n, w, w*per)
			}
		}
		if opened := rc.Conns() - before; opened > per+5 {
			t.Errorf("%d connections opened for %d deliveries in %d waves; want about one wave's worth (at most %d)", opened, waves*per, waves, per+5)
		}
	})
}
