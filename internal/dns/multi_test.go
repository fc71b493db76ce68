package dns_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/dns/dnstest"
)

func TestTXTSeveralRecords(t *testing.T) {
	srv := dnstest.Start(t)
	name := "_service.acme-554207444c.test"
	srv.SetTXT(name, "v=spf1 -all", "gatehouse-verification=nxr2xecsz54cmx7esp2frapj6v9ng9hm", "gatehouse-verification=sezy0m0abyat1o77ypffvlhpuxlpri8y")
	got, err := dns.New(srv.Addr, 2*time.Second).TXT(context.Background(), name)
	if err != nil || len(got) != 3 {
		t.Fatalf("TXT = %q, %v; want the three records", got, err)
	}
}
