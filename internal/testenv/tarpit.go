package testenv

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Tarpit is a TCP listener that accepts connections and never writes a
// byte: a webhook receiver that never answers, not even the TLS handshake.
// Its connections are closed when the test ends.
type Tarpit struct {
	// URL is https://host:port of the listener.
	URL      string
	mu       sync.Mutex
	accepted []time.Time
}

// NewTarpit starts a Tarpit for t.
func NewTarpit(t testing.TB) *Tarpit {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Tarpit{URL: "https://" + l.Addr().String()}
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.accepted, conns = append(p.accepted, time.Now()), append(conns, c)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return p
}

// Accepted returns when each connection was accepted, in order.
func (p *Tarpit) Accepted() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.accepted...)
}
