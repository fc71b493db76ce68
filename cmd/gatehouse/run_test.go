package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// testGetenv is a getenv over vars only, so the real environment never
// leaks into a test.
func testGetenv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestRunVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"version"}, testGetenv(nil), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("gatehouse version: exit %d, stderr %q; want 0", code, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(out, "gatehouse ") || len(out) <= len("gatehouse ") {
		t.Errorf("gatehouse version printed %q; want \"gatehouse <version>\"", out)
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"frobnicate"}},
		{"unexpected argument", []string{"migrate", "extra"}},
		{"unknown flag", []string{"serve", "--no-such-flag"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			env := map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "g.db")}
			code := run(ctx, tc.args, testGetenv(env), &stdout, &stderr)
			if code != 2 {
				t.Fatalf("gatehouse %v: exit %d, stderr %q; want 2", tc.args, code, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Errorf("gatehouse %v: nothing on stderr; want the reason", tc.args)
			}
		})
	}
}

func TestRunBadConfig(t *testing.T) {
	tests := []struct {
		name, env, value string
	}{
		{"log format xml", "GATEHOUSE_LOG_FORMAT", "xml"},
		{"rate limit maybe", "GATEHOUSE_RATE_LIMIT", "maybe"},
		{"mail limit maybe", "GATEHOUSE_MAIL_LIMIT", "maybe"},
		{"hsts maybe", "GATEHOUSE_HSTS", "maybe"},
		{"address without port", "GATEHOUSE_ADDR", "nope"},
		{"address with a bad port", "GATEHOUSE_ADDR", "127.0.0.1:99999"},
		{"short jwt secret", "GATEHOUSE_JWT_SECRET", "short"},
		{"short encryption key", "GATEHOUSE_ENCRYPTION_KEY", "0123456789abcdef0123456789abcde"},
		{"mysql database", "GATEHOUSE_DATABASE_URL", "mysql://x"},
		{"ftp smtp", "GATEHOUSE_SMTP_URL", "ftp://x"},
		{"base url without scheme", "GATEHOUSE_BASE_URL", "gatehouse.example"},
		{"web url ftp", "GATEHOUSE_WEB_URL", "ftp://web.example"},
		{"webhook allow private perhaps", "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "perhaps"},
		{"mail from not an address", "GATEHOUSE_MAIL_FROM", "nobody"},
		{"shutdown drain soon", "GATEHOUSE_SHUTDOWN_DRAIN", "soon"},
		{"shutdown drain negative", "GATEHOUSE_SHUTDOWN_DRAIN", "-1s"},
		{"brand accent a name", "GATEHOUSE_BRAND_ACCENT", "red"},
		{"brand accent breaking out of css", "GATEHOUSE_BRAND_ACCENT", "#fff;} body{display:none"},
		{"brand logo javascript", "GATEHOUSE_BRAND_LOGO_URL", "javascript:alert(1)"},
		{"brand logo scheme-relative", "GATEHOUSE_BRAND_LOGO_URL", "//evil.example/x.png"},
		{"brand support url with a quote", "GATEHOUSE_BRAND_SUPPORT_URL", `https://x.example/"onmouseover`},
		{"brand terms url relative", "GATEHOUSE_BRAND_TERMS_URL", "terms.html"},
		{"brand name blank", "GATEHOUSE_BRAND_NAME", "   "},
		{"brand name with a line break", "GATEHOUSE_BRAND_NAME", "Acme\r\nBcc: all@example.com"},
	}
	for _, tc := range tests {
		for _, cmd := range []string{"serve", "migrate"} {
			t.Run(tc.name+" "+cmd, func(t *testing.T) {
				// Should a bad value be accepted, serve would start: the
				// timeout stops it so the test fails instead of hanging.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				dir := t.TempDir()
				env := map[string]string{
					"GATEHOUSE_ADDR":         "127.0.0.1:0",
					"GATEHOUSE_DATABASE_URL": "sqlite:" + filepath.Join(dir, "g.db"),
					"GATEHOUSE_RATE_LIMIT":   "off",
				}
				env[tc.env] = tc.value
				var stdout, stderr bytes.Buffer
				code := run(ctx, []string{cmd}, testGetenv(env), &stdout, &stderr)
				if code != 2 {
					t.Fatalf("%s=%s gatehouse %s: exit %d, stderr %q; want 2", tc.env, tc.value, cmd, code, stderr.String())
				}
				out := stderr.String()
				if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
					t.Errorf("%s=%s: stderr %q; want exactly one line", tc.env, tc.value, out)
				}
				if !strings.Contains(out, tc.env) {
					t.Errorf("%s=%s: stderr %q; want it to name %s", tc.env, tc.value, out, tc.env)
				}
				if _, err := os.Stat(filepath.Join(dir, "g.db")); err == nil {
					t.Errorf("%s=%s: the database file was created; want start-up to stop before touching it", tc.env, tc.value)
				}
			})
		}
	}
}

func TestRunBadConfigAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantName []string
	}{
		{"two bad variables", []string{"serve"},
			map[string]string{"GATEHOUSE_LOG_FORMAT": "xml", "GATEHOUSE_RATE_LIMIT": "maybe"},
			[]string{"GATEHOUSE_LOG_FORMAT", "GATEHOUSE_RATE_LIMIT"}},
		{"bad flag value", []string{"serve", "--log-format", "xml"}, nil, []string{"GATEHOUSE_LOG_FORMAT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			env := map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "g.db")}
			for k, v := range tc.env {
				env[k] = v
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, tc.args, testGetenv(env), &stdout, &stderr)
			if code != 2 {
				t.Fatalf("gatehouse %v with %v: exit %d, stderr %q; want 2", tc.args, tc.env, code, stderr.String())
			}
			out := stderr.String()
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Errorf("stderr %q; want exactly one line", out)
			}
			for _, name := range tc.wantName {
				if !strings.Contains(out, name) {
					t.Errorf("stderr %q; want it to name %s", out, name)
				}
			}
		})
	}
}

func TestRunMigrate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	env := map[string]string{"GATEHOUSE_DATABASE_URL": "sqlite:" + db}
	for i := 1; i <= 2; i++ {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"migrate"}, testGetenv(env), &stdout, &stderr); code != 0 {
			t.Fatalf("gatehouse migrate (run %d): exit %d, stderr %q; want 0", i, code, stderr.String())
		}
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() == 0 {
		t.Fatalf("after migrate, database file %s: %v; want it created", db, err)
	}
}

var listeningRE = regexp.MustCompile(`listening on http://127\.0\.0\.1:([0-9]+)`)

// serving is a gatehouse serve started by startServe.
type serving struct {
	port   string
	cancel context.CancelFunc
	done   chan int // the exit code
	logs   *testenv.LockedBuffer
}

// startServe runs "gatehouse serve" on SQLite in-process, with extra
// settings besides the test ones, and waits for its "listening on" line.
// Cancelling stands for SIGINT/SIGTERM, as in main.
func startServe(t *testing.T, extra map[string]string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := map[string]string{
		"GATEHOUSE_ADDR":         "127.0.0.1:0",
		"GATEHOUSE_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "g.db"),
		"GATEHOUSE_RATE_LIMIT":   "off",
	}
	for k, v := range extra {
		env[k] = v
	}
	s := &serving{cancel: cancel, done: make(chan int, 1), logs: &testenv.LockedBuffer{}}
	go func() { s.done <- run(ctx, []string{"serve"}, testGetenv(env), io.Discard, s.logs) }()
	deadline := time.After(15 * time.Second)
	for s.port == "" {
		select {
		case code := <-s.done:
			t.Fatalf("gatehouse serve exited %d before listening; log:\n%s", code, s.logs.String())
		case <-deadline:
			cancel()
			t.Fatalf("no \"listening on http://127.0.0.1:PORT\" line after 15s; log:\n%s", s.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := listeningRE.FindStringSubmatch(s.logs.String()); m != nil {
			s.port = m[1]
		}
	}
	return s
}

func TestRunServe(t *testing.T) {
	srv := startServe(t, nil)
	port, cancel, done, logs := srv.port, srv.cancel, srv.done, srv.logs
	base := "http://127.0.0.1:" + port
	res, err := http.Get(base + "/health")
	if err != nil {
		t.Fatalf("GET %s/health: %v", base, err)
	}
	var body map[string]any
	decErr := json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != 200 || decErr != nil {
		t.Fatalf("GET %s/health: status %d, JSON error %v; want 200 with a JSON object", base, res.StatusCode, decErr)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("after cancel, gatehouse serve exit %d; want 0; log:\n%s", code, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("gatehouse serve still running 15s after cancel; log:\n%s", logs.String())
	}
	c := &http.Client{Timeout: 2 * time.Second}
	if res, err := c.Get(base + "/health"); err == nil {
		res.Body.Close()
		t.Errorf("GET %s/health after shutdown answered %d; want the listener closed", base, res.StatusCode)
	}
}

// TestMailLimitSetting checks GATEHOUSE_MAIL_LIMIT: on by default, off
// only when set so, and independent of GATEHOUSE_RATE_LIMIT.
func TestMailLimitSetting(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		mail, rate bool
	}{
		{map[string]string{}, true, true},
		{map[string]string{"GATEHOUSE_RATE_LIMIT": "off"}, true, false},
		{map[string]string{"GATEHOUSE_MAIL_LIMIT": "off"}, false, true},
		{map[string]string{"GATEHOUSE_MAIL_LIMIT": "on", "GATEHOUSE_RATE_LIMIT": "off"}, true, false},
	} {
		c, err := loadConfig(nil, testGetenv(tc.env))
		if err != nil {
			t.Fatalf("loadConfig(%v): %v", tc.env, err)
		}
		if c.MailLimit != tc.mail || c.RateLimit != tc.rate {
			t.Errorf("loadConfig(%v): MailLimit %v, RateLimit %v; want %v, %v", tc.env, c.MailLimit, c.RateLimit, tc.mail, tc.rate)
		}
	}
	if c, err := loadConfig([]string{"--mail-limit", "off"}, testGetenv(nil)); err != nil || c.MailLimit {
		t.Errorf("--mail-limit off: MailLimit %v, err %v; want false", c != nil && c.MailLimit, err)
	}
}

// TestHSTSSetting checks GATEHOUSE_HSTS: on by default, off only when set
// so, and handed to the service as NoHSTS.
func TestHSTSSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		hsts bool
	}{
		{map[string]string{}, true},
		{map[string]string{"GATEHOUSE_HSTS": "on"}, true},
		{map[string]string{"GATEHOUSE_HSTS": "off"}, false},
	} {
		c, err := loadConfig(nil, testGetenv(tc.env))
		if err != nil {
			t.Fatalf("loadConfig(%v): %v", tc.env, err)
		}
		c.resolveURLs("127.0.0.1:8080")
		if c.HSTS != tc.hsts || c.app().NoHSTS == tc.hsts {
			t.Errorf("loadConfig(%v): HSTS %v, NoHSTS %v; want HSTS %v", tc.env, c.HSTS, c.app().NoHSTS, tc.hsts)
		}
	}
}

// TestReachable checks the host of the "listening on" line and of the
// default base URL when gatehouse listens on every interface.
func TestReachable(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:41234":     "127.0.0.1:41234",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"[::1]:8080":     "[::1]:8080",
		"10.1.2.3:80":    "10.1.2.3:80",
	} {
		if got := reachable(in); got != want {
			t.Errorf("reachable(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestDefaultBaseURL: a loopback listener's default base URL names
// localhost, where browsers allow passkeys (issue 30 item 8); another
// address is kept, and a base URL set is never changed.
func TestDefaultBaseURL(t *testing.T) {
	for _, tc := range []struct{ base, bound, want string }{
		{"", "127.0.0.1:8080", "http://localhost:8080"},
		{"", "[::1]:8080", "http://localhost:8080"},
		{"", "10.1.2.3:80", "http://10.1.2.3:80"},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080"},
	} {
		c := &Config{BaseURL: tc.base}
		c.resolveURLs(tc.bound)
		if c.BaseURL != tc.want || c.WebURL != tc.want {
			t.Errorf("base %q bound %q: base URL %q, web URL %q; want %q", tc.base, tc.bound, c.BaseURL, c.WebURL, tc.want)
		}
	}
}

// TestRunServeFinishesInFlight checks graceful shutdown: a request whose
// body is still arriving when SIGINT/SIGTERM (here: the context) comes is
// answered in full before the server exits.
func TestRunServeFinishesInFlight(t *testing.T) {
	srv := startServe(t, nil)
	conn, err := net.Dial("tcp", "127.0.0.1:"+srv.port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"email":"inflight@example.com","password":"correct horse","name":"In Flight"}`
	head := "POST /v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := conn.Write([]byte(head + body[:10])); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server is reading the body
	srv.cancel()
	time.Sleep(200 * time.Millisecond) // shutdown has begun
	if _, err := conn.Write([]byte(body[10:])); err != nil {
		t.Fatalf("finish the body after shutdown began: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the in-flight request: %v; log:\n%s", err, srv.logs.String())
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("in-flight register answered %d; want 200", res.StatusCode)
	}
	select {
	case code := <-srv.done:
		if code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("gatehouse serve still running 15s after the in-flight request")
	}
}

// TestRunVersionNamesSchema: "gatehouse version" names the release and
// the schema version this binary migrates to.
func TestRunVersionNamesSchema(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"version"}, testGetenv(nil), &stdout, &stderr)
	want := fmt.Sprintf("(schema %d)", sqlstore.SchemaVersion())
	if out := stdout.String(); !strings.HasPrefix(out, "gatehouse "+release) || !strings.Contains(out, want) {
		t.Errorf("gatehouse version printed %q; want the release %s and %s", out, release, want)
	}
}

// TestRefuseNewerSchema: serve and migrate on a database a newer release
// migrated stop at once with one clear line, and leave it untouched.
func TestRefuseNewerSchema(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "newer.db")
	db, err := sqlstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	newer := sqlstore.SchemaVersion() + 20
	if _, err := db.DB().Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, cmd := range []string{"serve", "migrate"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{cmd}, testGetenv(map[string]string{"GATEHOUSE_DATABASE_URL": url, "GATEHOUSE_ADDR": "127.0.0.1:0"}), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("schema version %d is newer than this binary knows", newer)) {
			t.Errorf("gatehouse %s on a newer schema: exit %d, stderr %q; want 1 and one line", cmd, code, stderr.String())
		}
	}
}
