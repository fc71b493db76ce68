package testenv

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Receiver is an HTTPS endpoint that records the webhook deliveries it
// gets. Give its Roots to the env (Options.RootCAs) so that the service
// trusts it.
type Receiver struct {
	// URL is the receiver's base URL; any path under it records.
	URL string
	// Fail makes it answer 500 (after recording) while set.
	Fail  atomic.Bool
	conns atomic.Int64 // connections accepted
	srv   *httptest.Server
	mu    sync.Mutex
	got   []Delivery
}

// Delivery is one webhook request a Receiver got.
type Delivery struct {
	Event, Signature, ID string // X-Service-Event, -Signature, -Delivery
	Body                 []byte
}

// NewReceiver starts a receiver, closed when t ends.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, Delivery{r.Header.Get("X-Service-Event"), r.Header.Get("X-Service-Signature"), r.Header.Get("X-Service-Delivery"), body})
		rc.mu.Unlock()
		if rc.Fail.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
		}
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.StartTLS()
	rc.URL = rc.srv.URL
	t.Cleanup(rc.srv.Close)
	return rc
}

// Conns is how many connections the receiver has accepted.
func (rc *Receiver) Conns() int64 { return rc.conns.Load() }

// Roots is a pool holding the receiver's certificate.
func (rc *Receiver) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

// Events returns the deliveries of event, oldest first.
func (rc *Receiver) Events(event string) []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []Delivery
	for _, d := range rc.got {
		if d.Event == event {
			out = append(out, d)
		}
	}
	return out
}

// Reset forgets the deliveries so far, for a receiver that serves both
// databases' runs.
func (rc *Receiver) Reset() {
	rc.mu.Lock()
	rc.got = nil
	rc.mu.Unlock()
}

// ClickBatches returns the (clicks, totalClicks) of each link.clicked
// delivery for the link, oldest first, and the clicks they add up to.
func (rc *Receiver) ClickBatches(t testing.TB, linkID string) ([][2]int, int) {
	t.Helper()
	var out [][2]int
	sum := 0
	for _, d := range rc.Events("link.clicked") {
		var p struct {
			Data struct {
				Link                struct{ ID string }
				Clicks, TotalClicks int
			}
		}
		if err := json.Unmarshal(d.Body, &p); err != nil {
			t.Fatalf("link.clicked body %s: %v", d.Body, err)
		}
		if p.Data.Link.ID == linkID {
			out = append(out, [2]int{p.Data.Clicks, p.Data.TotalClicks})
			sum += p.Data.Clicks
		}
	}
	return out, sum
}
