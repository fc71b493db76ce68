// Package dns looks up the TXT records that prove a domain claim, through a
// configured server or the system resolver, always with a timeout.
package dns

import (
	"context"
	"errors"
	"net"
	"time"
)

// Resolver reads TXT records.
type Resolver struct {
	r       *net.Resolver
	timeout time.Duration
}

// New returns a Resolver that asks server ("host:port") or, when server is
// empty, the system resolver. Each lookup gives up after timeout.
func New(server string, timeout time.Duration) *Resolver {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	r := &net.Resolver{}
	if server != "" {
		r.PreferGo = true
		r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		}
	}
	return &Resolver{r: r, timeout: timeout}
}

// TXT returns the TXT strings at name. A name that does not exist, or has
// no TXT record, gives an empty list and no error.
func (r *Resolver) TXT(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	txt, err := r.r.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	return txt, err
}
