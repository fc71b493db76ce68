package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
)

// limitModes are what -limits accepts: the abuse limits off (the bench's
// default, so one client IP is never refused), in each instance's memory
// (GATEHOUSE_RATE_LIMIT=local) or in the shared PostgreSQL table (on).
// With them on, every request names its own client address in
// X-Forwarded-For from a trusted loopback proxy, so the limiters do their
// work on every request without refusing any: `-db postgres -targets
// login,register -limits local` against `-limits shared` is what the
// shared store adds to each.
var limitModes = map[string]string{"off": "off", "local": "local", "shared": "on"}

// opsFlags are the flags of the operations measurements: -limits and
// -soak (soak.go).
func (c *config) opsFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.limits, "limits", "off", "abuse limits of the measured server: off, local (each instance's memory) or shared (the PostgreSQL table); "+
		"local and shared give every request its own client address through a trusted X-Forwarded-For")
	fs.DurationVar(&c.soak, "soak", 0, "instead of the measurements: mixed traffic (verify, refresh, tasks, login, myorgs) on PostgreSQL for this long at -c connections, "+
		"reporting RSS and goroutines over time (not in CI)")
	fs.IntVar(&c.backupRows, "backup-rows", 0, "instead of the measurements: seed this many audit entries into SQLite (1400000: about 1 GiB), "+
		"then time gatehouse backup while refreshes write at -c connections (not in CI)")
	fs.IntVar(&c.observe, "observe", 0, "instead of the measurements: this many pairs of runs of each -targets target (verify,refresh) on a plain server and on one with "+
		"metrics and traces on (default sampling, spans to a sink in the bench), alternating which runs first; reports the paired differences (not in CI)")
	fs.StringVar(&c.metricsAddr, "metrics", "", "GATEHOUSE_METRICS_ADDR of the started server (127.0.0.1:6061), to take CPU profiles from /debug/pprof/ during a run")
}

func (c *config) opsChecks(check func(bad bool, format string, args ...any)) {
	check(limitModes[c.limits] == "", "-limits must be off, local or shared")
	check(c.url != "" && c.limits != "off", "-limits needs a server the bench starts (not -url)")
	check(c.soak < 0, "-soak must not be negative")
	check(c.soak > 0 && c.url != "", "-soak needs a server the bench starts (not -url)")
	check(c.backupRows < 0, "-backup-rows must not be negative")
	check(c.backupRows > 0 && c.url != "", "-backup-rows needs a server the bench starts (not -url)")
	check(c.metricsAddr != "" && c.url != "", "-metrics needs a server the bench starts (not -url)")
	check(c.observe < 0, "-observe must not be negative")
	check(c.observe > 0 && (c.url != "" || c.metricsAddr != "" || c.limits != "off"), "-observe starts its own servers: no -url, -metrics or -limits")
	check(c.observe > 0 && slices.ContainsFunc(c.targets, func(t string) bool { return t == "baseline" || finiteTarget(t) }),
		"-observe measures servers again and again: no baseline and no target that uses up its work")
}

// limitsEnv is the server's settings for -limits and -metrics.
func (c *config) limitsEnv() []string {
	var env []string
	if c.metricsAddr != "" {
		env = append(env, "GATEHOUSE_METRICS_ADDR="+c.metricsAddr)
	}
	if c.limits == "off" {
		return env
	}
	return append(env, "GATEHOUSE_RATE_LIMIT="+limitModes[c.limits], "GATEHOUSE_TRUSTED_PROXIES=127.0.0.1/32,::1/128")
}

// spread is r, its requests from many clients (spreadClients) when the
// limits are on and r is a gatehouse target (not the baseline, db "-").
func (c *config) spread(r *runner, db string) *runner {
	if c.limits == "off" || db == "-" {
		return r
	}
	return spreadClients(r)
}

// spreadClients makes each of r's requests come from its own client
// address (X-Forwarded-For, 10.0.0.0/8 and on), so per-IP limits count
// without refusing.
func spreadClients(r *runner) *runner {
	var n atomic.Uint32
	request := r.request
	out := *r
	out.request = func(w int) (*http.Request, error) {
		req, err := request(w)
		if err == nil {
			i := n.Add(1)
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i)))
		}
		return req, err
	}
	return &out
}

// registration is the register target's state: a run id and a count, so
// every request signs a new address up.
type registration struct {
	url, run, password string
	n                  atomic.Int64
}

// registerTarget measures "POST /v1/auth/register" with a new address
// each time (a password hash, the account, its workspace and its
// confirmation mail queued).
func registerTarget() target {
	return newTarget("register",
		func(_ context.Context, e *env) (*registration, error) {
			return &registration{url: e.baseURL + "/v1/auth/register", run: randomHex(4), password: "pw-" + randomHex(10)}, nil
		},
		func(_ int, s *registration) (*http.Request, error) {
			body, err := json.Marshal(map[string]string{"email": fmt.Sprintf("reg-%s-%d@example.com", s.run, s.n.Add(1)),
				"password": s.password, "name": "Bench"})
			if err != nil {
				return nil, err
			}
			return postJSON(s.url, body)
		},
		nil)
}
