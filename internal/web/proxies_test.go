package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/gatehouse/gatehouse/internal/web"
)

// TestTrustedProxies: X-Forwarded-For names the client only when the
// peer is a trusted proxy, read from the right past the trusted hops; a
// spoofed header from any other peer is ignored, so an attacker cannot
// pick the address the abuse limits count.
func TestTrustedProxies(t *testing.T) {
	k := web.NewServer(web.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	var got string
	k.Mux().HandleFunc("GET /ip", func(w http.ResponseWriter, r *http.Request) { got = k.ClientIP(r) })
	for _, c := range []struct{ name, peer, xff, want string }{
		{"untrusted peer, spoofed header ignored", "203.0.113.9:4000", "198.51.100.7", "203.0.113.9"},
		{"trusted proxy", "10.1.2.3:4000", "198.51.100.7", "198.51.100.7"},
		{"client prepends a forged hop", "10.1.2.3:4000", "1.2.3.4, 198.51.100.7", "198.51.100.7"},
		{"two trusted hops", "10.1.2.3:4000", "198.51.100.7, 10.9.9.9", "198.51.100.7"},
		{"trusted proxy, no header", "10.1.2.3:4000", "", "10.1.2.3"},
		{"trusted proxy, malformed hop", "10.1.2.3:4000", "not-an-ip", "10.1.2.3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/ip", nil)
			req.RemoteAddr = c.peer
			if c.xff != "" {
				req.Header.Set("X-Forwarded-For", c.xff)
			}
			k.ServeHTTP(httptest.NewRecorder(), req)
			if got != c.want {
				t.Errorf("client IP = %q; want %q", got, c.want)
			}
		})
	}
	// Without trusted proxies every header is ignored.
	plain := web.NewServer(web.Config{})
	plain.Mux().HandleFunc("GET /ip", func(w http.ResponseWriter, r *http.Request) { got = plain.ClientIP(r) })
	req := httptest.NewRequest("GET", "/ip", nil)
	req.RemoteAddr = "10.1.2.3:4000"
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	plain.ServeHTTP(httptest.NewRecorder(), req)
	if got != "10.1.2.3" {
		t.Errorf("no trusted proxies: client IP = %q; want the peer", got)
	}
}
