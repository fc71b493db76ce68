// Package binary tests the gatehouse command as shipped: built with go
// build, started with "gatehouse serve" and configured only by the
// environment the README documents, with nothing injected (no clock, no
// logger, no resolver, no hasher), then walked over real HTTP through the
// main write path of every module (and a relying party signing in through
// OpenID Connect), on SQLite and on PostgreSQL. The other
// tests build the service with app.New and inject a clock; these would
// have caught a dependency the binary leaves unset.
package binary

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// build is the gatehouse binary, built once per test process.
var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// binary builds ./cmd/gatehouse once, as a user would.
func binary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		if build.dir, build.err = os.MkdirTemp("", "gatehouse-binary-"); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "gatehouse")
		cmd := exec.Command("go", "build", "-o", build.bin, "github.com/gatehouse/gatehouse/cmd/gatehouse")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// TestShippedBinary walks every module's main write path on the built
// binary, once per database: each answer must be the expected one (never
// a 5xx), the mail and the webhook deliveries must arrive, and the server
// must log no panic and stop cleanly on SIGTERM.
func TestShippedBinary(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			walk(t, start(t, testenv.FreshURL(t, db)))
		})
	}
}

// server is a running gatehouse binary and what it talks to.
type server struct {
	base string // "http://localhost:PORT", the default base URL of its "listening on" line
	mail *mailtest.Sink
	hook *receiver
	logs *testenv.LockedBuffer
	// proc is the process; exited receives its end (put it back after
	// taking it, for the cleanup).
	proc   *os.Process
	exited chan error
}

var listening = regexp.MustCompile(`listening on http://[0-9.]+:[0-9]+"? base_url=(http://localhost:[0-9]+)`)

// start runs "gatehouse serve" on dbURL with the README's settings: an
// address with port 0 and a database, plus the SMTP sink, webhooks to a
// local receiver (GATEHOUSE_WEBHOOK_ALLOW_PRIVATE and its CA), rate limits
// off and no drain on shutdown. Nothing else of the environment reaches it
// that starts with GATEHOUSE_ (extra settings are added). The server is
// stopped with SIGTERM when t ends, and its log checked.
func start(t *testing.T, dbURL string, extra ...string) *server {
	bin := binary(t)
	s := &server{mail: mailtest.Start(t), hook: newReceiver(t), logs: &testenv.LockedBuffer{}}
	ca := filepath.Join(t.TempDir(), "receiver-ca.pem")
	if err := os.WriteFile(ca, s.hook.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEHOUSE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATABASE_URL="+dbURL,
		"GATEHOUSE_SMTP_URL="+s.mail.URL(), "GATEHOUSE_RATE_LIMIT=off", "GATEHOUSE_SHUTDOWN_DRAIN=0s",
		"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true", "GATEHOUSE_WEBHOOK_CA_FILE="+ca)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.proc, s.exited = cmd.Process, exited
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("gatehouse serve ended with %v after SIGTERM; log:\n%s", err, s.tail())
			}
		case <-time.After(45 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("gatehouse serve still running 45 s after SIGTERM; log:\n%s", s.tail())
		}
		for _, line := range strings.Split(s.logs.String(), "\n") {
			if strings.Contains(strings.ToLower(line), "panic") {
				t.Errorf("the server logged a panic: %.2000s", line)
			}
		}
	})
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(s.logs.String()); m != nil {
			s.base = m[1]
			return s
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("gatehouse serve exited (%v) before listening; log:\n%s", err, s.tail())
		default:
		}
	}
	t.Fatalf("no \"listening on http://…\" line after 30 s; log:\n%s", s.tail())
	return nil
}

// tail is the end of the server's log, for a failure's message.
func (s *server) tail() string {
	lines := strings.Split(strings.TrimRight(s.logs.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// walk is one person's day on the service: every module's main write path.
func walk(t *testing.T, s *server) {
	s.do(t, "GET", "/health", "", nil, 200)
	if r := s.do(t, "GET", "/", "", nil, 200); !strings.Contains(string(r.Body), "Sign in") {
		t.Errorf("GET / shows no sign-in page: %.300s", r.Body)
	}
	s.do(t, "GET", "/signin", "", nil, 200)

	// Identity: sign-up, the address confirmed through the mailed link,
	// sign-in, a refresh, a magic link through the mailbox.
	email, pw := testenv.Email(), "pw-"+testenv.RandomHex(12)
	reg := s.do(t, "POST", "/v1/auth/register", "", map[string]any{"email": email, "password": pw, "name": "Ada"}, 200)
	tok := s.mailToken(t, email, s.base+"/verify-email?token=")
	s.do(t, "POST", "/v1/auth/verify-email", "", map[string]any{"token": tok}, 200)
	login := s.do(t, "POST", "/v1/auth/login", "", map[string]any{"email": email, "password": pw}, 200)
	refreshed := s.do(t, "POST", "/v1/auth/refresh", "", map[string]any{"refresh_token": login.Str("refresh_token")}, 200)
	if refreshed.Str("refresh_token") == "" || refreshed.Str("refresh_token") == login.Str("refresh_token") {
		t.Errorf("refresh gave refresh token %q; want a new one", refreshed.Str("refresh_token"))
	}
	s.do(t, "POST", "/v1/auth/magic-link", "", map[string]any{"email": email}, 200)
	tok = s.mailToken(t, email, s.base+"/auth/magic?token=")
	magic := s.do(t, "POST", "/v1/auth/magic-link/verify", "", map[string]any{"token": tok}, 200)
	at := magic.Str("access_token")
	if me := s.do(t, "GET", "/v1/auth/me", at, nil, 200); me.Str("user.email") != email || me.Get("user.email_verified") != true {
		t.Errorf("me = %s; want %s, verified", me.Body, email)
	}
	if reg.Str("user.id") != magic.Str("user.id") {
		t.Errorf("magic link signed in %q; want the registered %q", magic.Str("user.id"), reg.Str("user.id"))
	}

	// Workspace: a team workspace and a team in it.
	org := s.do(t, "POST", "/v1/orgs", at, map[string]any{"name": "Binary works"}, 200)
	orgID, ot := org.Str("org.id"), org.Str("access_token")
	team := s.do(t, "POST", "/v1/orgs/"+orgID+"/teams", ot, map[string]any{"name": "Binary team"}, 200).Str("team.id")

	// Tasks.
	if r := s.do(t, "POST", "/tasks/v1/issues", ot, map[string]any{"teamId": team, "title": "First issue"}, 200); r.Get("issue.number") != 1.0 {
		t.Errorf("issue = %s; want number 1", r.Body)
	}

	// Links, with a webhook that must be delivered, and a click.
	s.do(t, "POST", "/links/v1/webhooks", ot, map[string]any{"url": s.hook.url + "/links"}, 200)
	link := s.do(t, "POST", "/links/v1/links", ot, map[string]any{"destinationUrl": "https://example.com/a"}, 200)
	s.hook.wait(t, "link.created", link.Str("link.id"))
	// The README's default short-link URL is on the accounts origin, so a
	// click shows the page naming the destination's host, not a redirect.
	if r := s.do(t, "GET", "/l/"+link.Str("link.shortCode"), "", nil, 200); !strings.Contains(string(r.Body), `href="https://example.com/a`) {
		t.Errorf("short link page = %.300s; want a link to https://example.com/a", r.Body)
	}

	// Forms: a form, an outside address as its destination, confirmed
	// through the mailed link, and a public submission mailed to it.
	form := s.do(t, "POST", "/forms/v1/forms", ot, map[string]any{"name": "Contact"}, 200).Str("form.id")
	dest := "inbox-" + testenv.RandomHex(4) + "@example.org"
	s.do(t, "POST", "/forms/v1/forms/"+form+"/destinations", ot, map[string]any{"type": "email", "config": map[string]any{"to": []string{dest}}}, 200)
	tok = s.mailToken(t, dest, s.base+"/forms/confirm?token=")
	s.page(t, "/forms/confirm", url.Values{"token": {tok}}, 200)
	s.do(t, "POST", "/forms/f/"+form, "", map[string]any{"email": "visitor@example.net", "message": "hello from the binary"}, 200)
	s.waitMail(t, dest, "hello from the binary")
	if r := s.do(t, "GET", "/forms/v1/forms/"+form+"/submissions", ot, nil, 200); len(r.Get("submissions").([]any)) != 1 {
		t.Errorf("submissions = %s; want 1", r.Body)
	}

	// Sign: a document sent to a signer, who gets the mail; its webhook.
	s.do(t, "POST", "/sign/v1/webhooks", ot, map[string]any{"url": s.hook.url + "/sign"}, 200)
	signer := "signer-" + testenv.RandomHex(4) + "@example.org"
	doc := s.document(t, ot, map[string]any{"name": "Lease", "message": "Please sign",
		"recipients": []map[string]any{{"name": "Sam", "email": signer, "role": "signer"}},
		"fields":     []map[string]any{{"type": "signature", "page": 1, "x": 10, "y": 20, "width": 100, "height": 30, "recipientIndex": 0}}})
	if r := s.do(t, "POST", "/sign/v1/documents/"+doc+"/send", ot, nil, 200); r.Str("document.status") != "pending" {
		t.Errorf("sent document = %s; want pending", r.Body)
	}
	s.hook.wait(t, "document.sent", doc)
	tok = url.QueryEscape(s.mailToken(t, signer, s.base+"/sign/v1/public/sign?token="))
	view := s.do(t, "GET", "/sign/v1/public/sign?token="+tok, "", nil, 200)
	fields, _ := view.Get("fields").([]any)
	if len(fields) != 1 {
		t.Fatalf("signing view = %s; want 1 field", view.Body)
	}
	field, _ := fields[0].(map[string]any)["id"].(string)
	s.do(t, "POST", "/sign/v1/public/sign?token="+tok, "", map[string]any{"values": map[string]string{field: "Sam"}}, 200)
	s.hook.wait(t, "document.completed", doc)

	// Keys: a personal key and an org key, each exchanged for a token
	// that the tool APIs take.
	key := s.do(t, "POST", "/v1/me/api-keys", at, map[string]any{"name": "Binary key", "org_id": orgID}, 200).Str("api_key.secret")
	kt := s.do(t, "POST", "/v1/auth/token", "", map[string]any{"api_key": key}, 200).Str("access_token")
	s.do(t, "GET", "/tasks/v1/issues?teamId="+team, kt, nil, 200)
	okey := s.do(t, "POST", "/v1/orgs/"+orgID+"/api-keys", ot, map[string]any{"name": "Binary org key"}, 200).Str("api_key.secret")
	okt := s.do(t, "POST", "/v1/auth/token", "", map[string]any{"api_key": okey}, 200).Str("access_token")
	s.do(t, "GET", "/links/v1/links", okt, nil, 200)

	// SCIM: a directory token provisions, finds, deactivates and removes
	// a user; the deleted token is refused.
	scim := s.do(t, "POST", "/v1/orgs/"+orgID+"/scim-tokens", ot, map[string]any{"name": "Binary directory"}, 200)
	st, stID := scim.Str("scim_token.token"), scim.Str("scim_token.id")
	su := s.do(t, "POST", "/scim/v2/Users", st, map[string]any{"userName": "dir-" + testenv.RandomHex(4) + "@example.org", "externalId": "b1"}, 201).Str("id")
	if r := s.do(t, "GET", "/scim/v2/Users?filter="+url.QueryEscape(`externalId eq "b1"`), st, nil, 200); r.Get("totalResults") != 1.0 {
		t.Errorf("SCIM lookup = %s; want 1 user", r.Body)
	}
	s.do(t, "PATCH", "/scim/v2/Users/"+su, st, map[string]any{"Operations": []map[string]any{{"op": "Replace", "path": "active", "value": "False"}}}, 200)
	s.do(t, "DELETE", "/scim/v2/Users/"+su, st, nil, 204)
	s.do(t, "DELETE", "/v1/orgs/"+orgID+"/scim-tokens/"+stID, ot, nil, 200)
	s.do(t, "GET", "/scim/v2/Users", st, nil, 401)

	// OpenID Connect: the team's own product signs its members in.
	walkOIDC(t, s, ot, orgID, email, pw)
	walkSSO(t, s, ot, orgID)

	s.do(t, "POST", "/v1/auth/logout", "", map[string]any{"refresh_token": refreshed.Str("refresh_token")}, 200)
}

// do sends a JSON request (body marshalled unless nil) and fails t unless
// the answer has status want; an answer of 500 or more always fails.
func (s *server) do(t *testing.T, method, path, token string, body any, want int) *testenv.Resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return s.send(t, req, want)
}

// page posts a hosted page's form as a browser on the page's origin would.
func (s *server) page(t *testing.T, path string, form url.Values, want int) *testenv.Resp {
	t.Helper()
	req, err := http.NewRequest("POST", s.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return s.send(t, req, want)
}

// document creates a Sign document (multipart: a PDF and the JSON) and
// returns its id.
func (s *server) document(t *testing.T, token string, doc map[string]any) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "lease.pdf")
	fw.Write(testenv.TestPDF)
	meta, _ := json.Marshal(doc)
	mw.WriteField("document", string(meta))
	mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/sign/v1/documents", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	r := s.send(t, req, 200)
	if r.Str("document.status") != "draft" {
		t.Fatalf("created document = %s; want a draft", r.Body)
	}
	return r.Str("document.id")
}

// noRedirects is a client that shows redirects rather than following them.
var noRedirects = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (s *server) send(t *testing.T, req *http.Request, want int) *testenv.Resp {
	t.Helper()
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: body}
	if r.Status != want {
		t.Fatalf("%s %s answered %d %.500s; want %d\nserver log:\n%s", req.Method, req.URL.Path, r.Status, body, want, s.tail())
	}
	return r
}

// waitMail waits up to 15 s for a message to `to` whose text holds
// contains, and returns its text.
func (s *server) waitMail(t *testing.T, to, contains string) string {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, m := range s.mail.Messages() {
			for _, rcpt := range m.To {
				if strings.EqualFold(rcpt, to) && strings.Contains(m.Text, contains) {
					return m.Text
				}
			}
		}
		if time.Now().After(end) {
			t.Fatalf("no mail to %s holding %q after 15 s (%d messages in the sink); server log:\n%s",
				to, contains, len(s.mail.Messages()), s.tail())
		}
	}
}

// mailToken waits for a mail to `to` with a link starting with prefix and
// returns the link's token.
func (s *server) mailToken(t *testing.T, to, prefix string) string {
	t.Helper()
	return testenv.TokenFromLink(t, s.waitMail(t, to, prefix), prefix)
}

// receiver is an HTTPS webhook endpoint recording what it gets.
type receiver struct {
	url string
	pem []byte // its certificate, for GATEHOUSE_WEBHOOK_CA_FILE
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	event string
	body  string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{r.Header.Get("X-Service-Event"), string(body)})
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	rc.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return rc
}

// wait waits up to 15 s for a delivery of event whose body names id.
func (rc *receiver) wait(t *testing.T, event, id string) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rc.mu.Lock()
		got := append([]delivery(nil), rc.got...)
		rc.mu.Unlock()
		for _, d := range got {
			if d.event == event && strings.Contains(d.body, id) {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("no %s webhook naming %s after 15 s; got %v", event, id, got)
		}
	}
}
