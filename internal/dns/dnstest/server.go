// Package dnstest runs a real DNS server on loopback for tests, answering
// TXT queries from records set by the test.
package dnstest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server is an authoritative DNS server for whatever names the test sets.
type Server struct {
	Addr string // host:port of the UDP and TCP listeners
	mu   sync.Mutex
	txt  map[string][]string
}

// Start listens on 127.0.0.1 (UDP and TCP on one port) until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{txt: map[string][]string{}}
	// UDP and TCP must share a port; the TCP side of a free UDP port can be
	// taken, so try a few.
	var pc net.PacketConn
	var ln net.Listener
	var err error
	for range 20 {
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = pc.LocalAddr().String()
	udp := &dns.Server{PacketConn: pc, Handler: s}
	tcp := &dns.Server{Listener: ln, Handler: s}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() {
		udp.Shutdown()
		tcp.Shutdown()
	})
	return s
}

// SetTXT sets the TXT strings answered for name; no values removes it.
func (s *Server) SetTXT(name string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := dns.Fqdn(strings.ToLower(name))
	if len(values) == 0 {
		delete(s.txt, key)
		return
	}
	s.txt[key] = values
}

// ServeDNS answers TXT questions from the records set; anything else is
// NXDOMAIN.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	s.mu.Lock()
	for _, q := range req.Question {
		vals, ok := s.txt[strings.ToLower(q.Name)]
		if !ok {
			continue
		}
		if q.Qtype != dns.TypeTXT {
			continue
		}
		for _, v := range vals {
			m.Answer = append(m.Answer, &dns.TXT{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
				Txt: []string{v},
			})
		}
	}
	s.mu.Unlock()
	if len(m.Answer) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}
