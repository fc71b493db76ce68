package dns_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/dns/dnstest"
)

func TestTXTThroughConfiguredServer(t *testing.T) {
	srv := dnstest.Start(t)
	srv.SetTXT("_service.example.com", "gatehouse-verification=abc")
	r := dns.New(srv.Addr, 2*time.Second)
	got, err := r.TXT(context.Background(), "_service.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "gatehouse-verification=abc" {
		t.Fatalf("TXT = %q; want [gatehouse-verification=abc]", got)
	}
	missing, err := r.TXT(context.Background(), "_service.absent.example")
	if err != nil || len(missing) != 0 {
		t.Fatalf("TXT(absent) = %q, %v; want empty, nil", missing, err)
	}
}

func TestTXTTimesOut(t *testing.T) {
	r := dns.New("127.0.0.1:1", 300*time.Millisecond) // nothing answers there
	start := time.Now()
	if _, err := r.TXT(context.Background(), "_service.example.com"); err == nil {
		t.Fatal("TXT against a dead server = nil error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("lookup took %v; want bounded by the timeout", d)
	}
}
