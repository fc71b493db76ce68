// Command bench is the Gatehouse load tool. It builds and starts gatehouse
// on each database in turn, drives sign-in endpoints with a closed loop of
// concurrent connections, and compares them with a bare net/http server.
//
//	go run ./bench                      # everything, sqlite and postgres, 10 s each
//	go run ./bench -d 5s -db sqlite     # shorter, one database
//	go run ./bench -targets verify -url http://127.0.0.1:8080 -pid 1234
//	go run ./bench -json > bench.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the command line, validated.
type config struct {
	conns         int
	duration      time.Duration
	warmup        time.Duration
	timeout       time.Duration
	floodTimeout  time.Duration
	dbs           []string
	pgURL         string
	targets       []string
	floodConns    int
	floodDuration time.Duration
	argonDuration time.Duration
	url           string
	pid           int
	bin           string
	jsonOut       bool
	keep          bool
	cores         int
	serveBaseline bool
	alsoConns     int
	myOrgs        int
	inviteUsers   int
	mfaUsers      int
	auditOrg      int
	auditTotal    int
	auditOthers   int
	jobs          []string
	jobsRate      float64
	limits        string
	soak          time.Duration
	backupRows    int
	metricsAddr   string
	observe       int
}

var knownDBs = []string{"sqlite", "postgres"}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var dbs, targets, jobs string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.conns, "c", 32, "concurrent connections (closed-loop workers) per target")
	fs.DurationVar(&c.duration, "d", 10*time.Second, "measured duration per target")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unrecorded warm-up before each measurement")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.StringVar(&dbs, "db", "sqlite,postgres", "databases to run gatehouse on, comma-separated: sqlite, postgres")
	fs.StringVar(&c.pgURL, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server URL used to create (and drop) a scratch database")
	fs.StringVar(&targets, "targets", strings.Join(defaultTargets(), ","), "targets to run, comma-separated: "+strings.Join(targetNames(), ", ")+
		" (audit, which seeds millions of rows first, is not in the default set and also runs audit_tool; nor is totp_step, which signs -mfa-users users in first)")
	fs.IntVar(&c.floodConns, "flood", 200, "connections of the login flood that measures peak memory")
	fs.DurationVar(&c.floodDuration, "flood-d", 10*time.Second, "duration of the login flood")
	fs.DurationVar(&c.floodTimeout, "flood-timeout", 30*time.Second, "per-request timeout in the login flood, where requests queue for the password hasher")
	fs.DurationVar(&c.argonDuration, "argon-d", 5*time.Second, "duration of the single-connection login run that times one password hash (0: skip)")
	fs.StringVar(&c.url, "url", "", "an already-running gatehouse on loopback (rate limit off); skips building, starting and -db")
	fs.IntVar(&c.pid, "pid", 0, "with -url: the server's process id, to sample its memory")
	fs.StringVar(&c.bin, "bin", "", "a gatehouse binary to use instead of building ./cmd/gatehouse")
	fs.BoolVar(&c.jsonOut, "json", false, "print results as JSON on stdout instead of a table")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary directory (server logs, SQLite file)")
	fs.IntVar(&c.cores, "cores", runtime.NumCPU(), "cores the server may use, for the argon2 efficiency figure")
	fs.BoolVar(&c.serveBaseline, "serve-baseline", false, "internal: run the baseline server")
	fs.IntVar(&c.alsoConns, "also-c", 0, "also run every gatehouse target (but invite_accept) at this many connections, right after the -c run: -also-c 1 gives latencies without queueing (0: off)")
	fs.IntVar(&c.myOrgs, "myorgs", 200, "myorgs: orgs the user belongs to (the personal org plus seeded team orgs)")
	fs.IntVar(&c.inviteUsers, "invite-users", 3000, "invite_accept: fresh users registered (through the API) before the run; each accepts once")
	fs.IntVar(&c.mfaUsers, "mfa-users", 3000, "totp_step: fresh users with a TOTP factor, each signed in once before the run; each takes the step once")
	fs.IntVar(&c.auditOrg, "audit-org", 1_000_000, "audit: entries of the audited org")
	fs.IntVar(&c.auditTotal, "audit-total", 10_000_000, "audit: entries in the whole audit log")
	fs.IntVar(&c.auditOthers, "audit-orgs", 900, "audit: other org ids sharing the rest of the log")
	fs.StringVar(&jobs, "jobs", "", "opt-in background-work measurements, comma-separated: "+strings.Join(jobNames, ", ")+
		" (each on its own gatehouse and fresh database; -c connections for -d; -targets '' runs only these)")
	fs.Float64Var(&c.jobsRate, "jobs-rate", 0, "fanout, mail, magic: at most this many requests started per second across the -c connections (0: as fast as they answer), to measure latency at a set rate")
	c.opsFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	c.dbs = splitList(dbs)
	c.targets = splitList(targets)
	if c.observe > 0 && !flagSet(fs, "targets") {
		c.targets = []string{"verify", "refresh"}
	}
	c.jobs = splitList(jobs)
	if c.want("audit") && !c.want("audit_tool") {
		c.targets = append(c.targets, "audit_tool")
	}
	return c, c.validate()
}

// flagSet reports whether the command line set the flag called name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// validate reports every problem at once.
func (c *config) validate() error {
	var problems []string
	check := func(bad bool, format string, args ...any) {
		if bad {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	check(c.conns < 1, "-c must be at least 1")
	check(c.duration <= 0, "-d must be positive")
	check(c.warmup < 0, "-warmup must not be negative")
	check(c.timeout <= 0, "-timeout must be positive")
	check(c.floodTimeout <= 0, "-flood-timeout must be positive")
	check(c.floodConns < 1, "-flood must be at least 1")
	check(c.floodDuration <= 0, "-flood-d must be positive")
	check(c.argonDuration < 0, "-argon-d must not be negative")
	check(c.jobsRate < 0, "-jobs-rate must not be negative")
	c.opsChecks(check)
	check(c.cores < 1, "-cores must be at least 1")
	check(len(c.targets) == 0 && len(c.jobs) == 0, "-targets is empty")
	check(c.alsoConns < 0, "-also-c must not be negative")
	check(c.myOrgs < 1, "-myorgs must be at least 1")
	check(c.inviteUsers < 1, "-invite-users must be at least 1")
	check(c.mfaUsers < 1, "-mfa-users must be at least 1")
	check(c.auditOrg < 100, "-audit-org must be at least 100 (the target reads 100 entries)")
	check(c.auditTotal < c.auditOrg, "-audit-total must be at least -audit-org")
	check(c.auditOthers < 0, "-audit-orgs must not be negative")
	check(c.auditTotal > c.auditOrg && c.auditOthers == 0, "-audit-orgs must be positive when -audit-total exceeds -audit-org")
	for _, t := range c.targets {
		check(!slices.Contains(targetNames(), t), "unknown target %q (want %s)", t, strings.Join(targetNames(), ", "))
	}
	if c.url == "" {
		for _, d := range c.dbs {
			check(!slices.Contains(knownDBs, d), "unknown database %q (want %s)", d, strings.Join(knownDBs, ", "))
		}
		check(len(c.dbs) == 0 && (c.wantsGatehouse() || len(c.jobs) > 0), "-db is empty")
		check(c.pid != 0, "-pid needs -url")
	} else {
		u, err := url.Parse(c.url)
		check(err != nil || u.Scheme != "http" || u.Host == "", "-url must be http://HOST:PORT")
		if err == nil {
			check(!isLoopback(u.Hostname()), "-url must be on loopback (127.0.0.1, ::1 or localhost): the bench only sends local traffic")
		}
		c.url = strings.TrimRight(c.url, "/")
	}
	validateJobs(c, check)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func (c *config) want(target string) bool { return slices.Contains(c.targets, target) }

func (c *config) wantsAudit() bool { return c.want("audit") || c.want("audit_tool") }

func (c *config) wantsGatehouse() bool {
	return slices.ContainsFunc(c.targets, func(t string) bool { return t != "baseline" })
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// run is the whole command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if cfg.serveBaseline {
		if err := serveBaseline(ctx, stderr); err != nil {
			fmt.Fprintf(stderr, "baseline: %v\n", err)
			return 1
		}
		return 0
	}

	b := &bench{cfg: cfg, log: log.New(stderr, "bench: ", log.Ltime), rep: newReport(cfg)}
	err = b.run(ctx)
	if b.cfg.jsonOut {
		if werr := b.rep.writeJSON(stdout); werr != nil {
			fmt.Fprintf(stderr, "bench: %v\n", werr)
			return 1
		}
	} else {
		b.rep.writeText(stdout)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "bench: interrupted; results above are partial")
		return 130
	case err != nil && b.cfg.jsonOut:
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "bench: failed; see problems above")
		return 1
	}
	return 0
}

// bench holds one run's state.
type bench struct {
	cfg config
	log *log.Logger
	rep *report
	tmp string
}

func (b *bench) run(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		return err
	}
	b.tmp = tmp
	defer func() {
		if b.cfg.keep {
			b.log.Printf("kept %s", tmp)
			return
		}
		os.RemoveAll(tmp)
	}()

	if b.cfg.soak > 0 {
		return b.runSoak(ctx)
	}
	if b.cfg.backupRows > 0 {
		return b.runBackup(ctx)
	}
	if b.cfg.observe > 0 {
		return b.runObserve(ctx)
	}
	var errs []error
	if b.cfg.want("baseline") {
		if err := b.runBaseline(ctx); err != nil {
			errs = append(errs, fmt.Errorf("baseline: %w", err))
		}
	}
	if (!b.cfg.wantsGatehouse() && len(b.cfg.jobs) == 0) || ctx.Err() != nil {
		return errors.Join(errs...)
	}
	if b.cfg.url != "" {
		if err := b.runGatehouse(ctx, "external", b.cfg.url, nil, nil); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	bin, err := b.binary(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, db := range b.cfg.dbs {
		if ctx.Err() != nil {
			break
		}
		if b.cfg.wantsGatehouse() {
			if err := b.runDatabase(ctx, bin, db); err != nil {
				b.log.Printf("%s: failed; see problems", db)
				b.rep.Failures = append(b.rep.Failures, fmt.Sprintf("%s: %v", db, err))
				errs = append(errs, fmt.Errorf("%s: %w", db, err))
			}
		}
		if len(b.cfg.jobs) > 0 && ctx.Err() == nil {
			if err := b.runJobs(ctx, bin, db); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", db, err))
			}
		}
	}
	return errors.Join(errs...)
}

// binary is the gatehouse binary to run: -bin's, or one built now.
func (b *bench) binary(ctx context.Context) (string, error) {
	if b.cfg.bin != "" {
		return b.cfg.bin, nil
	}
	return b.build(ctx)
}

// build compiles ./cmd/gatehouse of the module the bench is run in.
func (b *bench) build(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("find the gatehouse module (run from inside it): %v", err)
	}
	bin := filepath.Join(b.tmp, "gatehouse")
	b.log.Printf("building ./cmd/gatehouse")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gatehouse")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build ./cmd/gatehouse: %v\n%s", err, out)
	}
	return bin, nil
}

// runBaseline starts this program as the baseline server and measures it.
func (b *bench) runBaseline(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, "baseline", exe, []string{"-serve-baseline"}, os.Environ(),
		filepath.Join(b.tmp, "baseline.log"), 10*time.Second)
	if err != nil {
		return err
	}
	defer srv.stop()
	setup := newClient(2, 10*time.Second)
	defer setup.CloseIdleConnections()
	if err := waitHealthy(ctx, setup, srv.url, 10*time.Second); err != nil {
		return err
	}
	e := &env{client: setup, baseURL: srv.url, workers: b.cfg.conns}
	_, err = b.measure(ctx, baselineTarget(), "baseline", "-", e, srv, b.load(b.cfg.conns, b.cfg.duration, b.cfg.timeout))
	return err
}

// runDatabase starts gatehouse on a fresh database of kind db, measures
// it, and stops it.
func (b *bench) runDatabase(ctx context.Context, bin, db string) error {
	var dbURL string
	switch db {
	case "sqlite":
		dbURL = "sqlite:" + filepath.Join(b.tmp, "bench-sqlite.db")
	case "postgres":
		u, drop, err := createDatabase(ctx, b.cfg.pgURL)
		if err != nil {
			return err
		}
		defer func() {
			if err := drop(); err != nil {
				b.log.Printf("postgres: %v", err)
			}
		}()
		dbURL = u
	}
	info := &dbInfo{kind: db, url: dbURL}
	if b.cfg.wantsAudit() {
		if err := b.seedAudit(ctx, bin, info); err != nil {
			return err
		}
	}
	b.log.Printf("%s: starting gatehouse", db)
	srv, err := startServer(ctx, "gatehouse ("+db+")", bin, []string{"serve"}, append(gatehouseEnv(dbURL), b.cfg.limitsEnv()...),
		filepath.Join(b.tmp, "gatehouse-"+db+".log"), time.Minute)
	if err != nil {
		return err
	}
	defer srv.stop()
	return b.runGatehouse(ctx, db, srv.url, srv, info)
}

// seedAudit migrates the fresh database and fills its audit log before
// the server starts, and reports how long that took.
func (b *bench) seedAudit(ctx context.Context, bin string, info *dbInfo) error {
	b.log.Printf("%s: gatehouse migrate", info.kind)
	if err := migrateDatabase(ctx, bin, info.url); err != nil {
		return err
	}
	b.log.Printf("%s: seeding the audit log: %d entries, %d of them for the audited org, the rest over %d other org ids",
		info.kind, b.cfg.auditTotal, b.cfg.auditOrg, b.cfg.auditOthers)
	a, err := seedAudit(ctx, info, b.cfg.auditOrg, b.cfg.auditTotal, b.cfg.auditOthers)
	if err != nil {
		return err
	}
	info.audit = a
	extra := ""
	if info.kind == "sqlite" {
		extra = " (" + sqliteSize(info.url) + ")"
	}
	b.log.Printf("%s: seeded %d audit entries in %v%s", info.kind, a.total, a.took.Round(100*time.Millisecond), extra)
	b.rep.Seeding = append(b.rep.Seeding, seedRow{DB: info.kind, Rows: a.total, OrgRows: a.orgRows, OtherOrgs: a.others,
		Seconds: a.took.Seconds(), Analyzed: a.analyzed})
	return nil
}

// gatehouseEnv is this environment without GATEHOUSE_* variables, so runs
// are reproducible, plus the settings the bench needs.
func gatehouseEnv(dbURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEHOUSE_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GATEHOUSE_ADDR=127.0.0.1:0",
		"GATEHOUSE_DATABASE_URL="+dbURL,
		"GATEHOUSE_RATE_LIMIT=off",
		// A WebAuthn relying party id cannot be an IP (passkey_signin).
		"GATEHOUSE_WEB_URL=http://localhost",
		// The bench stops a server with SIGTERM and kills it 5 s later;
		// nothing is in flight then, so no drain window.
		"GATEHOUSE_SHUTDOWN_DRAIN=0s",
		// The idjag target's identity provider is the bench, on loopback.
		"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true",
	)
}

// runGatehouse seeds a user on the server at baseURL and measures every
// wanted gatehouse target. srv and info are nil for a server the bench did
// not start.
func (b *bench) runGatehouse(ctx context.Context, db, baseURL string, srv *server, info *dbInfo) error {
	setup := newClient(8, time.Minute)
	defer setup.CloseIdleConnections()
	if err := waitHealthy(ctx, setup, baseURL, 15*time.Second); err != nil {
		return err
	}
	user := &benchUser{email: "bench-" + randomHex(4) + "@example.com", password: "pw-" + randomHex(10)}
	if err := register(ctx, setup, baseURL, user); err != nil {
		return err
	}
	e := &env{client: setup, baseURL: baseURL, workers: b.cfg.conns, user: user, db: info,
		myOrgs: b.cfg.myOrgs, inviteUsers: b.cfg.inviteUsers, mfaUsers: b.cfg.mfaUsers,
		logf: func(format string, args ...any) { b.log.Printf(db+": "+format, args...) }}

	var errs []error
	var loginRow *row
	for _, t := range targets() {
		if t.name == "baseline" || !b.cfg.want(t.name) || ctx.Err() != nil {
			continue
		}
		if err := srv.died(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		lc := b.load(b.cfg.conns, b.cfg.duration, b.cfg.timeout)
		if t.finite {
			lc.warmup = 0 // its setup warms up: a timed warm-up could use up all its work
		}
		r, err := b.measure(ctx, t, t.name, db, e, srv, lc)
		if err != nil {
			errs = append(errs, err)
			if srv.died() != nil {
				return errors.Join(errs...)
			}
			continue
		}
		if t.name == "login" {
			loginRow = r
		}
		if b.cfg.alsoConns > 0 && b.cfg.alsoConns != b.cfg.conns && !t.finite && r != nil && ctx.Err() == nil && srv.died() == nil {
			ae := *e
			ae.workers = b.cfg.alsoConns
			if _, err := b.measure(ctx, t, t.name, db, &ae, srv, b.load(b.cfg.alsoConns, b.cfg.duration, b.cfg.timeout)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if loginRow != nil && b.cfg.argonDuration > 0 && ctx.Err() == nil && srv.died() == nil {
		if err := b.measureArgon(ctx, db, e, loginRow); err != nil {
			errs = append(errs, err)
		}
	}
	if b.cfg.want("flood") && ctx.Err() == nil && srv.died() == nil {
		fe := *e
		fe.workers = b.cfg.floodConns
		if _, err := b.measure(ctx, loginTarget(), "flood (login)", db, &fe, srv, b.load(b.cfg.floodConns, b.cfg.floodDuration, b.cfg.floodTimeout)); err != nil {
			errs = append(errs, err)
		}
	}
	if srv != nil {
		b.rep.addServer(db, srv)
	}
	return errors.Join(errs...)
}

// load is a loadConfig with the common warm-up.
func (b *bench) load(conns int, d, timeout time.Duration) loadConfig {
	return loadConfig{conns: conns, warmup: b.cfg.warmup, duration: d, timeout: timeout}
}

// measure sets up t and drives it as lc says, sampling the server's
// memory and CPU, and adds a row to the report.
func (b *bench) measure(ctx context.Context, t target, label, db string, e *env, srv *server, lc loadConfig) (*row, error) {
	r, err := t.setup(ctx, e)
	if why, ok := isSkip(err); ok {
		b.log.Printf("%s: %s: skipped: %s", db, label, why)
		b.rep.Skipped = append(b.rep.Skipped, fmt.Sprintf("%s on %s: %s", label, db, why))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", label, db, err)
	}
	r = b.cfg.spread(r, db)
	pid := b.cfg.pid
	var before logCounts
	if srv != nil {
		pid = srv.pid()
		before = srv.logs.snapshot()
	}
	where := db
	if db == "-" {
		where = "net/http"
	}
	b.log.Printf("%s: %s: %d connections, %v warm-up + %v", where, label, lc.conns, lc.warmup, lc.duration)
	client := newClient(lc.conns, lc.timeout)
	rss := sampleRSS(pid, 100*time.Millisecond)
	var cpuFrom cpuSample
	lc.atMeasure = func() { cpuFrom = readCPU(pid) }
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if srv != nil {
		go func() { // a dead server ends the run at once
			select {
			case <-srv.exited:
				cancel()
			case <-runCtx.Done():
			}
		}()
	}
	res := runLoad(runCtx, client, r, lc)
	cpuTo := readCPU(pid)
	peak := rss.finish()
	client.CloseIdleConnections()
	if ctx.Err() != nil {
		return nil, ctx.Err() // a cut-short run is not a result
	}
	if err := srv.died(); err != nil {
		return nil, fmt.Errorf("during %s on %s: %w", label, db, err)
	}

	out := newRow(label, db, lc.conns, res, peak)
	out.CPU = share(cpuFrom, cpuTo)
	out.ServerCPUPerReq = serverCPUPerReq(out)
	if srv != nil {
		out.LogLines, out.LogProblems, out.LogSamples = srv.logs.since(before)
	}
	if r.notes != nil {
		info, problems := r.notes()
		out.Info = append(out.Info, info...)
		out.Notes = append(out.Notes, problems...)
	}
	if res.exhausted {
		out.Info = append(out.Info, fmt.Sprintf("%d requests measured; ran out of work %.2f s into the measured window, req/s is over that time", out.Requests, res.elapsed.Seconds()))
	}
	b.rep.add(out)
	b.log.Printf("%s: %s: %.0f req/s, p50 %s, p99 %s, %d errors", where, label, out.RPS, fmtMS(out.P50MS), fmtMS(out.P99MS), out.Errors)
	return out, nil
}

// measureArgon times sign-in on one connection, where it is about one
// password hash plus overheads, and compares the concurrent login rate
// with what the cores could do hashing back to back.
func (b *bench) measureArgon(ctx context.Context, db string, e *env, login *row) error {
	r, err := loginTarget().setup(ctx, e)
	if err != nil {
		return err
	}
	b.log.Printf("%s: login at 1 connection for %v (single hash time)", db, b.cfg.argonDuration)
	client := newClient(1, b.cfg.timeout)
	res := runLoad(ctx, client, r, loadConfig{conns: 1, warmup: 500 * time.Millisecond, duration: b.cfg.argonDuration, timeout: b.cfg.timeout})
	client.CloseIdleConnections()
	if res.latency.count() == 0 {
		return fmt.Errorf("argon2 on %s: no login completed at 1 connection", db)
	}
	single := res.latency.mean()
	ideal := float64(b.cfg.cores) / single.Seconds()
	b.rep.Argon2 = append(b.rep.Argon2, argonRow{
		DB:            db,
		SingleMeanMS:  ms(single),
		SingleP50MS:   ms(res.latency.percentile(50)),
		SingleErrors:  res.errors,
		Cores:         b.cfg.cores,
		IdealRPS:      ideal,
		LoginConns:    login.Conns,
		LoginRPS:      login.RPS,
		EfficiencyPct: 100 * login.RPS / ideal,
	})
	return nil
}
