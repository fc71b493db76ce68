// Package testenv runs Gatehouse in-process for end-to-end tests: a real
// HTTP server, a real database (SQLite in a temporary file, or a fresh
// PostgreSQL database), an in-process SMTP sink and an injectable clock.
//
// PostgreSQL comes from GATEHOUSE_TEST_DATABASE_URL; without it the
// PostgreSQL half of each test is skipped, except under CI=true where its
// absence fails the run.
//
// An endpoint's tests are a table of Case rows run by Env.RunCases, with
// the helpers here for what many tests set up or check: accounts, sessions
// and mail links (signin.go, mail.go, session.go), orgs, invitations and
// workspaces (orgs.go, workspace.go, audit.go), access tokens (jwt.go) and
// answers (case.go, json.go). They take a testing.TB and live outside
// _test files, so any package's tests can use them.
package testenv

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/dns/dnstest"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tracing"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// Databases are the backends every end-to-end test runs on.
var Databases = []string{"sqlite", "postgres"}

// Clock is an injectable clock that only moves when told.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock set to a fixed instant near the real time.
func NewClock() *Clock { return &Clock{t: time.Now().UTC().Truncate(time.Second)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Env is one running Gatehouse.
type Env struct {
	DB    string
	URL   string
	Clock *Clock
	Mail  *mailtest.Sink
	// Forms is the Forms tool, for waiting on its mail.
	Forms *forms.Service
	// Links and Webhooks, for flushing click batches and waiting on
	// deliveries.
	Links    *links.Service
	Webhooks *webhooks.Service
	// Sign is the Sign tool, for running its lifecycle sweeps on the
	// test clock.
	Sign *sign.Service
	// SSO is single sign-on, for running its metadata refresh on the
	// test clock.
	SSO *sso.Service
	// MCP is the MCP server, for putting it on the test clock and closing
	// it as a shutdown does.
	MCP *mcp.Server
	DNS *dnstest.Server // answers the service's TXT lookups
	// SQL is the database; Store is its identity store (which holds
	// workspace's tables too), for tests that seed or check rows
	// (Store.DB() is the raw writer pool).
	SQL   *sqlstore.DB
	Store *sqlstore.Identity
	// Queue is the service's job queue (SQL.OnQueue(Queue) inserts jobs
	// the service works).
	Queue string
	// Svc is the identity service.
	Svc    *identity.Service
	Client *http.Client
	Logs   *LockedBuffer
	OAuth  *oauth.Server
	// Keys is the key ring; Signer the service's one signing seam (the
	// access tokens' HS256 secret joined to the ring).
	Keys   *keys.Ring
	Signer keys.Signer
	routes router
	// Jobs is the service's view of SQL: its job queue, able to queue
	// mail (QueueMail), for tests of the job engine.
	Jobs *sqlstore.DB
	opts Options
	// ShortLinkURL is GATEHOUSE_SHORT_LINK_URL (Options.ShortLinksOnAccounts).
	ShortLinkURL string
	// issuer is the URL of the first instance: every instance of one
	// service has the same GATEHOUSE_BASE_URL.
	issuer string
}

// cheapHash keeps tests fast; the production parameters are benchmarked.
var cheapHash = password.Params{Memory: 512, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}

// Run runs fn as a subtest on each database.
func Run(t *testing.T, fn func(t *testing.T, env *Env)) {
	RunWith(t, Options{}, fn)
}

// RunWith is Run with options.
func RunWith(t *testing.T, o Options, fn func(t *testing.T, env *Env)) {
	t.Helper()
	for _, db := range Databases {
		t.Run(db, func(t *testing.T) {
			fn(t, New(t, db, o))
		})
	}
}

// New starts a Gatehouse on db ("sqlite" or "postgres").
func New(t testing.TB, db string, o Options) *Env {
	t.Helper()
	sdb := o.DB
	if sdb == nil {
		sdb = OpenDB(t, db)
	}
	env := &Env{DB: db, Clock: NewClock(), Mail: mailtest.Start(t), DNS: dnstest.Start(t), SQL: sdb, Store: sdb.Identity(), Logs: &LockedBuffer{},
		opts: o}
	env.start(t)
	return env
}

// Another starts a second Gatehouse on e's database, clock, mail sink and
// DNS server, as another instance behind the same load balancer would be
// (the same issuer; its own job queue unless Options.JobQueue names one).
func (e *Env) Another(t testing.TB) *Env {
	t.Helper()
	env := &Env{DB: e.DB, Clock: e.Clock, Mail: e.Mail, DNS: e.DNS, SQL: e.SQL, Store: e.Store, Logs: &LockedBuffer{}, opts: e.opts, issuer: e.issuer}
	env.start(t)
	return env
}

// start builds the service on env's database and serves it.
func (env *Env) start(t testing.TB) {
	t.Helper()
	o, sdb := env.opts, env.SQL
	env.Queue = cmp.Or(o.JobQueue, "test_"+RandomHex(6))
	// slog's handler serializes its writes to Logs.
	log := slog.New(slog.NewTextHandler(env.Logs, nil))
	if o.Tracer != nil {
		log = slog.New(tracing.LogHandler(log.Handler()))
	}
	// The listener comes first: its URL is the issuer (GATEHOUSE_BASE_URL).
	srv := httptest.NewUnstartedServer(nil)
	env.URL = "http://" + srv.Listener.Addr().String()
	if o.TLS {
		env.URL = "https://" + srv.Listener.Addr().String()
	}
	if env.issuer == "" {
		env.issuer = env.URL
	}
	webURL := "http://web.test"
	if o.LocalWeb {
		webURL = "http://localhost:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	}
	if o.WebURL != "" {
		webURL = o.WebURL
	}
	env.ShortLinkURL = "http://links.test/l"
	if o.ShortLinksOnAccounts {
		env.ShortLinkURL = env.issuer + "/l"
	}
	sender, err := mail.New(mail.Options{URL: env.Mail.URL(), From: "Gatehouse <no-reply@gatehouse.test>", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), app.Config{BaseURL: env.issuer, APIURL: env.issuer, FormsURL: env.issuer + "/forms",
		ShortLinkURL: env.ShortLinkURL, WebURL: webURL, MobileURL: "https://mobile.test/app",
		JWTSecret: JWTSecret, RateLimit: o.RateLimit, MailLimit: o.MailLimits, NoHSTS: o.NoHSTS,
		WebhookAllowPrivate: true, MetadataAllowPrivate: o.AllowPrivate, OutboundCAs: o.RootCAs, Brand: o.Brand,
		SessionMaxAge: o.SessionMaxAge, Social: o.Social}, o.deps(env, sdb, sender, log))
	if err != nil {
		t.Fatal(err)
	}
	env.Svc, env.OAuth, env.Forms, env.Links, env.Webhooks = a.Identity, a.OAuth, a.Forms, a.Links, a.Webhooks
	env.Sign, env.Jobs, env.Keys, env.Signer, env.SSO, env.MCP = a.Sign, a.JobsDB(), a.Keys, a.Signer, a.SSO, a.MCP
	srv.Config.Handler = env.validated(t, a.Handler)
	if o.TLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() {
		srv.Close()
		a.Close(context.Background())
	})
	env.Client = srv.Client()
}

// OpenDB returns a migrated database on db: "sqlite", a fresh file in
// t's temporary directory, closed when t ends; "postgres", the test
// binary's own database (see the package comment on when it is skipped).
func OpenDB(t testing.TB, db string) *sqlstore.DB {
	t.Helper()
	switch db {
	case "sqlite":
		// No sync at each commit: a test's database need not survive a
		// power loss, and its requests need not wait for the disk
		// (production syncs; the binary tests run with its settings).
		s, err := sqlstore.Open(context.Background(), "sqlite:"+sqliteCopy(t)+"?_pragma=synchronous(NORMAL)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	case "postgres":
		return sharedPostgres(t)
	}
	t.Fatalf("unknown database %q", db)
	return nil
}

// FreshURL returns the address of a new, empty database on db, for tests
// that drive its migrations or run a binary on it: "sqlite", a file in
// t's temporary directory; "postgres", a database of its own on the test
// server, dropped when t ends (skipped as the shared one is).
func FreshURL(t testing.TB, db string) string {
	t.Helper()
	if db == "sqlite" {
		return "sqlite:" + filepath.Join(t.TempDir(), "fresh.db")
	}
	base := os.Getenv("GATEHOUSE_TEST_DATABASE_URL")
	if base == "" {
		skipOrFail(t, "GATEHOUSE_TEST_DATABASE_URL is not set")
	}
	u, drop, err := createPostgres(base, "gatehouse_fresh_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return u
}

// createPostgres creates an empty database named prefix<random> on the
// server at base and returns its URL and a function that drops it.
func createPostgres(base, prefix string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	name := prefix + RandomHex(6)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", base, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u.Path = "/" + name
	return u.String(), func() {
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}, nil
}

// skipOrFail skips t for want of something it needs (a PostgreSQL server,
// a program), or fails it under CI, where everything is required.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (required under CI)")
	}
	t.Skip(why)
}

// NeedTool skips t when an external program or install the test drives
// (node, the npm packages, Chromium) is missing, or fails it under CI,
// where scripts/setup-e2e.sh must have installed it.
func NeedTool(t testing.TB, ok bool, what string) {
	t.Helper()
	if !ok {
		skipOrFail(t, what+" is missing; run scripts/setup-e2e.sh")
	}
}

var pg struct {
	once sync.Once
	db   *sqlstore.DB
	err  error
	skip string
}

// sharedPostgres returns one database per test binary, created fresh for
// this run (gatehouse_test_<random>).
func sharedPostgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	pg.once.Do(func() {
		base := os.Getenv("GATEHOUSE_TEST_DATABASE_URL")
		if base == "" {
			pg.skip = "GATEHOUSE_TEST_DATABASE_URL is not set"
			return
		}
		u, drop, err := createPostgres(base, "gatehouse_test_")
		if err != nil {
			pg.err = err
			return
		}
		pg.db, pg.err = sqlstore.Open(context.Background(), u)
		dropAtExit = func() {
			if pg.db != nil {
				pg.db.Close()
			}
			drop()
		}
	})
	if pg.skip != "" {
		skipOrFail(t, pg.skip)
	}
	if pg.err != nil {
		t.Fatal(pg.err)
	}
	return pg.db
}

var dropAtExit = func() {}

// sqliteTemplate is a migrated SQLite database, made once per test binary.
// Each test's database is a copy of its file: migrating costs about a
// second per database under -race, where the pure-Go SQLite is
// instrumented, and a copy a few milliseconds.
var sqliteTemplate struct {
	once sync.Once
	dir  string
	err  error
}

// sqliteCopy returns the path of a fresh copy of the migrated template in
// t's temporary directory.
func sqliteCopy(t testing.TB) string {
	t.Helper()
	tpl := &sqliteTemplate
	tpl.once.Do(func() {
		if tpl.dir, tpl.err = os.MkdirTemp("", "gatehouse-template-"); tpl.err != nil {
			return
		}
		s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(tpl.dir, "gatehouse.db"))
		if err != nil {
			tpl.err = err
			return
		}
		// The key ring's first keys (and the encryption key sealing them)
		// are made once here, not by every test's first start (an RSA key
		// costs 20-80 ms); internal/keys tests the first start on fresh
		// databases.
		if _, err := app.OpenKeys(context.Background(), app.Config{}, s, nil); err != nil {
			s.Close()
			tpl.err = err
			return
		}
		// Closing the last connection checkpoints the WAL into the file.
		tpl.err = s.Close()
	})
	if tpl.err != nil {
		t.Fatalf("migrate the SQLite template: %v", tpl.err)
	}
	dst := filepath.Join(t.TempDir(), "gatehouse.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(tpl.dir, "gatehouse.db"+suffix))
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err == nil {
			err = os.WriteFile(dst+suffix, b, 0o600)
		}
		if err != nil {
			t.Fatalf("copy the SQLite template: %v", err)
		}
	}
	return dst
}

// Main runs a package's tests and drops the PostgreSQL database they used
// and the SQLite template. Call it from TestMain: os.Exit(testenv.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	dropAtExit()
	if sqliteTemplate.dir != "" {
		os.RemoveAll(sqliteTemplate.dir)
	}
	return code
}

// RandomHex returns 2n random hex characters.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Email returns a fresh unique address.
func Email() string { return "user-" + RandomHex(6) + "@example.com" }

// Resp is an HTTP answer.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (nil when it is not an object).
func (r *Resp) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Str returns the string at a dotted path of the JSON body ("user.email").
func (r *Resp) Str(path string) string {
	v, _ := r.Get(path).(string)
	return v
}

// Get returns the value at a dotted path of the JSON body.
func (r *Resp) Get(path string) any {
	var v any = r.JSON()
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Do sends method path with body (marshalled to JSON unless it is a string
// or []byte) and bearer token (if not empty).
func (e *Env) Do(t testing.TB, method, path, bearer string, body any) *Resp {
	t.Helper()
	r, err := e.Try(method, path, bearer, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Try is Do for any goroutine: it returns a failure as an error instead of
// failing the test.
func (e *Env) Try(method, path, bearer string, body any) (*Resp, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	r, err := e.Send(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, path, err)
	}
	return r, nil
}

// Send sends req with the env's client and reads the whole answer.
func (e *Env) Send(req *http.Request) (*Resp, error) {
	res, err := e.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return &Resp{Status: res.StatusCode, Header: res.Header, Body: data}, err
}

// PostForm posts form, url-encoded, to path (the OAuth endpoints).
func (e *Env) PostForm(t testing.TB, path string, form url.Values) *Resp {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err := e.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Want fails the test unless r has status want.
func (r *Resp) Want(t testing.TB, want int) *Resp {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, want)
	}
	return r
}

// Account is a registered user and its first session.
type Account struct {
	Email, Password, Name string
	UserID, OrgID         string // OrgID is the personal org
	Access, Refresh       string // the first session's tokens, scoped to the personal org
	// Token is the access token a test acts with: Access at first, then
	// the token of the workspace CreateOrg or Join last scoped it to.
	Token string
}

// Register signs a new account up and returns it.
func (e *Env) Register(t testing.TB) *Account {
	t.Helper()
	return e.register(t, Email(), "Test User")
}

// RegisterAt signs a new account up with an address at domain.
func (e *Env) RegisterAt(t testing.TB, domain string) *Account {
	t.Helper()
	return e.register(t, "x-"+RandomHex(5)+"@"+domain, "Domain User")
}

func (e *Env) register(t testing.TB, email, name string) *Account {
	t.Helper()
	a := &Account{Email: email, Password: "password-" + RandomHex(4), Name: name}
	r := e.Do(t, "POST", "/v1/auth/register", "", map[string]string{"email": a.Email, "password": a.Password, "name": a.Name}).Want(t, 200)
	a.UserID, a.OrgID = r.Str("user.id"), r.Str("org.id")
	a.Access, a.Refresh = r.Str("access_token"), r.Str("refresh_token")
	a.Token = a.Access
	return a
}

// TokenFromLink returns the token query parameter of the first link in text
// that starts with prefix.
func TokenFromLink(t testing.TB, text, prefix string) string {
	t.Helper()
	i := strings.Index(text, prefix)
	if i < 0 {
		t.Fatalf("no link starting %q in mail:\n%s", prefix, text)
	}
	link := text[i:]
	if j := strings.IndexAny(link, " \r\n"); j >= 0 {
		link = link[:j]
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	if tok == "" {
		t.Fatalf("link %q has no token", link)
	}
	return tok
}

// Postgres returns the test binary's fresh PostgreSQL database (created on
// first use, dropped by Main); it skips t when none is configured.
func Postgres(t testing.TB) *sqlstore.DB { return sharedPostgres(t) }
