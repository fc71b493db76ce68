// Command gatehouse runs the Gatehouse accounts and authentication service.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/metrics"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
)

// release is the version of this source tree: each release in
// docs/releases.md, with its last migration.
const release = "v0.1.0"

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: gatehouse serve | migrate | jobs | keys rotate | users | sessions | backup | restore | health | version

  serve     apply pending migrations and run the HTTP server
  migrate   apply pending migrations and exit
  jobs      list the job queue: [-state S] [-kind K] [-limit N]
  keys      keys rotate [-alg RS256|ES256]: a new signing key per algorithm;
            the old one stays published 24 hours
  users     users list [-limit N] [-after ID] | users show|delete EMAIL |
            users create EMAIL [--name N] [--verified] (no password: sign-in by link)
  sessions  sessions revoke --user EMAIL: end every session of an account
  backup    backup FILE: a consistent copy of the SQLite database, taken live
  restore   restore FILE: replace the SQLite database by a backup (server stopped)
  health    health [URL]: exit 0 when the server on GATEHOUSE_ADDR answers
            GET /health with 200 (a container's health check)
  version   print the release and the schema version it migrates to

Configuration is by GATEHOUSE_* environment variables (or --kebab-case flags).`

// run is the whole program; it returns the exit code: 2 for bad usage or
// configuration, 1 for a failure while running.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "gatehouse %s (schema %d)\n", versionString(), sqlstore.SchemaVersion())
		return 0
	case "help", "--help", "-h":
		fmt.Fprintln(stdout, usage)
		return 0
	case "serve", "migrate":
	case "jobs":
		return jobsCommand(ctx, args[1:], getenv, stdout, stderr)
	case "keys":
		return keysCommand(ctx, args[1:], getenv, stdout, stderr)
	case "users":
		return usersCommand(ctx, args[1:], getenv, stdout, stderr)
	case "sessions":
		return sessionsCommand(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return backupCommand(ctx, args[1:], getenv, stdout, stderr)
	case "restore":
		return restoreCommand(ctx, args[1:], getenv, stdout, stderr)
	case "health":
		return healthCommand(ctx, args[1:], getenv, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "gatehouse: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
	cfg, err := loadConfig(args[1:], getenv)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: configuration: %s\n", oneLine(err))
		return 2
	}
	log := newLogger(cfg.LogFormat, stderr)
	if args[0] == "migrate" {
		if err := sqlstore.Migrate(ctx, cfg.DatabaseURL); err != nil {
			if newer := (*sqlstore.ErrSchemaNewer)(nil); errors.As(err, &newer) {
				fmt.Fprintf(stderr, "gatehouse: %s\n", newer)
				return 1
			}
			log.Error("migrate failed", "err", err)
			return 1
		}
		log.Info("migrations applied")
		return 0
	}
	if err := serve(ctx, cfg, log); err != nil {
		if newer := (*sqlstore.ErrSchemaNewer)(nil); errors.As(err, &newer) {
			fmt.Fprintf(stderr, "gatehouse: %s\n", newer)
			return 1
		}
		log.Error("gatehouse stopped", "err", err)
		return 1
	}
	return 0
}

func oneLine(err error) string {
	s := err.Error()
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' {
			out = append(out, ';', ' ')
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev := ""
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		if rev != "" {
			return release + "-dev-" + rev
		}
	}
	return release
}

func serve(ctx context.Context, cfg *Config, log *slog.Logger) error {
	tracer, log, stopTracing, err := startTracing(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("traces: %w", err)
	}
	defer stopTracing()
	release, err := holdDatabase(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer release()
	db, err := sqlstore.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	bound := reachable(ln.Addr().String())
	cfg.resolveURLs(bound)

	sender, err := mail.New(mail.Options{URL: cfg.SMTPURL, From: cfg.MailFrom, Logger: log})
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	deps := app.Deps{DB: db, Mail: sender, Resolver: dns.New(cfg.DNSServer, 5*time.Second), Logger: log, Tracer: tracer}
	if cfg.MetricsAddr != "" {
		deps.Metrics = metrics.New()
		stop, err := serveMetrics(cfg.MetricsAddr, deps.Metrics, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	a, err := app.New(ctx, cfg.app(), deps)
	if err != nil {
		return err
	}
	var draining atomic.Bool
	srv := &http.Server{
		Handler:           closeWhenDraining(a.Handler, &draining),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("listening on http://"+bound, "base_url", cfg.BaseURL, "database", db.Dialect(), "version", versionString())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Keep serving a while with keep-alives off, so that a request already
	// sent on a kept-alive connection is read and answered rather than
	// lost when Shutdown closes the connections it finds idle.
	log.Info("shutting down: draining, keep-alives off", "drain", cfg.ShutdownDrain.String())
	draining.Store(true)
	select {
	case err := <-errc:
		return err
	case <-time.After(cfg.ShutdownDrain):
	}
	log.Info("shutting down: finishing in-flight requests")
	a.MCP.Close() // the MCP sessions' GET streams end now rather than hold Shutdown
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
	}
	// Mail and click batches finish, then the running jobs, within 30 s
	// more; jobs not started stay queued in the database for the next
	// start (or another instance).
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelClose()
	if err := a.Close(closeCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

// serveMetrics serves /metrics and /debug/pprof/ on addr, a listener of
// their own that the deployment keeps private; stop closes it.
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	log.Info("metrics on http://" + reachable(ln.Addr().String()) + "/metrics")
	return func() { srv.Close() }, nil
}

// closeWhenDraining answers with "Connection: close" once draining is set,
// which turns keep-alives off one answer at a time. Unlike
// (*http.Server).SetKeepAlivesEnabled(false) it does not close the idle
// connections at once: a request already sent on one of them, but not read
// yet, is still answered.
func closeWhenDraining(h http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
