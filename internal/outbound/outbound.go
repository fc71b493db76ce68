// Package outbound builds the HTTP transports Gatehouse uses to call URLs
// its clients name (client ID metadata documents, webhooks): no proxy, the
// configured extra CAs, and no private addresses unless allowed, checked
// on the address actually dialled so DNS cannot point around it.
package outbound

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// Transport clones base (nil: http.DefaultTransport) for calls to
// client-named URLs. roots nil keeps base's TLS roots.
func Transport(base *http.Transport, allowPrivate bool, roots *x509.CertPool, dialTimeout time.Duration) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.Proxy = nil
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	dialer := &net.Dialer{Timeout: dialTimeout}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !PublicAddr(ip) {
				return fmt.Errorf("refusing to connect to non-public address %s", host)
			}
			return nil
		}
	}
	t.DialContext = dialer.DialContext
	return t
}

// PublicAddr reports whether ip is a public unicast address.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() &&
		!ip.IsMulticast() && !ip.IsUnspecified() && !ip.IsInterfaceLocalMulticast() &&
		!netip.MustParsePrefix("100.64.0.0/10").Contains(ip) && !netip.MustParsePrefix("fc00::/7").Contains(ip)
}

// ParseURL parses an absolute URL a client gives Gatehouse to call or to
// send people to: one of schemes, a host, a valid port if any, no
// credentials, and at most max bytes once normalized. It returns the
// normalized form.
func ParseURL(raw string, max int, schemes ...string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !slices.Contains(schemes, u.Scheme) || u.Hostname() == "" || u.User != nil {
		return "", false
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", false
		}
	}
	out := u.String()
	return out, len(out) <= max
}
