package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunLoadFiniteEndsWhenExhausted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	const work = 200
	var next atomic.Int64
	r := &runner{request: func(int) (*http.Request, error) {
		if next.Add(1) > work {
			return nil, errExhausted
		}
		return http.NewRequest(http.MethodGet, srv.URL, nil)
	}}
	cfg := loadConfig{conns: 4, duration: time.Minute, timeout: time.Second}
	began := time.Now()
	res := runLoad(context.Background(), newClient(4, time.Second), r, cfg)
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("runLoad took %v, want it to end when the work runs out", took)
	}
	if res.requests != work || res.errors != 0 {
		t.Errorf("requests = %d, errors = %d; want %d and 0", res.requests, res.errors, work)
	}
	if !res.exhausted || res.elapsed <= 0 || res.elapsed >= cfg.duration {
		t.Errorf("exhausted = %v, elapsed = %v; want true and the time the work lasted", res.exhausted, res.elapsed)
	}
}

func TestMissingRoute(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/orgs/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not_found","message":"org not found"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []struct {
		method, path string
		missing      bool
	}{
		{http.MethodGet, "/v1/orgs/x", false},        // the service's own 404
		{http.MethodGet, "/v1/orgs/x/members", true}, // the mux's 404
		{http.MethodPost, "/v1/orgs/x", true},        // the mux's 405
	} {
		err := callAs(ctx, srv.Client(), c.method, srv.URL+c.path, "tok", nil, nil)
		if err == nil {
			t.Fatalf("%s %s: no error", c.method, c.path)
		}
		if _, got := missingRoute(err); got != c.missing {
			t.Errorf("%s %s: missingRoute = %v, want %v (%v)", c.method, c.path, got, c.missing, err)
		}
	}
}

func TestTargetsFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exchange", "myorgs", "members50", "members10k", "invite_accept"} {
		if !c.want(want) {
			t.Errorf("default targets %v lack %s", c.targets, want)
		}
	}
	if c.wantsAudit() {
		t.Errorf("default targets %v include the audit targets", c.targets)
	}
	c, err = parseFlags([]string{"-targets", "audit", "-audit-org", "1000", "-audit-total", "5000", "-audit-orgs", "4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.targets, []string{"audit", "audit_tool"}) || c.auditOrg != 1000 || c.auditTotal != 5000 || c.auditOthers != 4 {
		t.Errorf("-targets audit: targets %v, audit %d/%d/%d", c.targets, c.auditOrg, c.auditTotal, c.auditOthers)
	}
	if _, err := parseFlags([]string{"-audit-org", "10", "-audit-total", "5"}, io.Discard); err == nil {
		t.Error("-audit-total below -audit-org accepted")
	}
}

func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		u := newUUID()
		if !re.MatchString(u) || seen[u] {
			t.Fatalf("newUUID() = %q: not a fresh version 4 UUID", u)
		}
		seen[u] = true
	}
}
