package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// binary builds the gatehouse command once per test into dir.
func binary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "gatehouse")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is a running gatehouse binary and the port it listens on.
type process struct {
	cmd  *exec.Cmd
	logs *testenv.LockedBuffer
	base string
}

// startBinary runs "gatehouse serve" with env and waits for its listening
// line.
func startBinary(t *testing.T, bin string, env map[string]string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, "serve"), logs: &testenv.LockedBuffer{}}
	p.cmd.Env = os.Environ()
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if m := listeningRE.FindStringSubmatch(p.logs.String()); m != nil {
			p.base = "http://127.0.0.1:" + m[1]
			return p
		}
	}
	t.Fatalf("no listening line after 30s; log:\n%s", p.logs.String())
	return nil
}

// call sends a JSON request and decodes the JSON answer, which must have
// status 200.
func (p *process) call(t *testing.T, method, path, token string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, p.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
	}
	return out
}

// TestKillNineKeepsJobs runs the real binary on each database: an
// account is registered while the SMTP server refuses mail and a link
// created while the webhook's receiver is down, the process is killed
// with SIGKILL right after the 200s, and once it starts again on the same
// database (both now up) the confirmation mail arrives once and the queued
// link.created delivery arrives with the delivery id it was queued with.
func TestKillNineKeepsJobs(t *testing.T) {
	// Mostly waiting on processes and timers: the package's slowest tests
	// overlap instead of adding up.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := binary(t, t.TempDir())
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "g.db")
		killNine(t, bin, "sqlite:"+path, func() (*sql.DB, error) { return sql.Open("sqlite", "file:"+path) }, "json(args)")
	})
	t.Run("postgres", func(t *testing.T) {
		url := testenv.FreshURL(t, "postgres")
		killNine(t, bin, url, func() (*sql.DB, error) { return sql.Open("pgx", url) }, "args::text")
	})
}

// killNine is the scenario of TestKillNineKeepsJobs on the database at
// dbURL; open opens it for the test and args is the SQL that reads a job's
// args as JSON text.
func killNine(t *testing.T, bin, dbURL string, open func() (*sql.DB, error), args string) {
	dir := t.TempDir()
	var mu sync.Mutex
	var got []string // X-Service-Delivery of each link.created received
	rc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Service-Event") == "link.created" {
			mu.Lock()
			got = append(got, r.Header.Get("X-Service-Delivery"))
			mu.Unlock()
		}
	}))
	// Up from the start, on its own port all along (a port closed and
	// listened on again may be taken meanwhile): the first process is not
	// given its certificate's CA, so each of its tries fails, as a refused
	// one would, and the delivery can only come from the second.
	rc.StartTLS()
	defer rc.Close()
	addr := rc.Listener.Addr().String()
	sink := mailtest.Start(t)
	sink.SetFailing(true) // refuses until the restart: the mail can only come from the second process
	env := map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_DATABASE_URL": dbURL,
		"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE": "true", "GATEHOUSE_SMTP_URL": sink.URL(),
		// The shortest rescue window accepted: a try the kill cut is
		// run again after it, not after the default 2 minutes.
		"GATEHOUSE_JOB_RESCUE_AFTER": jobs.MinRescueAfter.String()}

	first := startBinary(t, bin, env)
	email := testenv.Email()
	token := first.call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"})["access_token"].(string)
	first.call(t, "POST", "/links/v1/webhooks", token, map[string]any{"url": "https://" + addr + "/hook", "events": []string{"link.created"}})
	first.call(t, "POST", "/links/v1/links", token, map[string]any{"destinationUrl": "https://example.com/"})
	first.cmd.Process.Kill() // SIGKILL: no drain, no flush
	first.cmd.Wait()
	queued, state := queuedDelivery(t, open, args)
	// Killed before its try, or after a refused one, the job is worked at
	// once after the restart; killed during a try (PostgreSQL wakes the
	// worker at the insert, and a fetch the dead process sent may still
	// commit after the state was read), it stays "running" until River
	// rescues it as lost: up to the rescue window more.
	t.Logf("delivery job state after the kill: %s", state)
	wait := 90*time.Second + jobs.MinRescueAfter // rescue, leader lease and rescuer period

	mu.Lock()
	early := len(got)
	mu.Unlock()
	if early != 0 {
		t.Fatalf("the first process delivered %d link.created events to a receiver it does not trust; want none", early)
	}
	sink.SetFailing(false)
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw}), 0o600)
	env["GATEHOUSE_WEBHOOK_CA_FILE"] = ca
	second := startBinary(t, bin, env)
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != queued {
		dumpJobs(t, open)
		t.Fatalf("link.created deliveries after the restart = %q; want one with the queued id %q; log:\n%s", got, queued, second.logs.String())
	}
	// The confirmation mail: its first try (or the try the kill cut) was
	// refused, so it comes after the restart, at its next retry (10 s) or
	// once rescued.
	sink.WaitFor(t, email, wait)
	if n := len(sink.Messages()); n != 1 {
		t.Errorf("%d mails after the restart; want the one confirmation", n)
	}
}

// queuedDelivery reads the delivery id and the state of the one webhook
// delivery job in the database of a killed process.
func queuedDelivery(t *testing.T, open func() (*sql.DB, error), argsJSON string) (id, state string) {
	t.Helper()
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var args []byte
	if err := db.QueryRow(`SELECT `+argsJSON+`, state FROM river_job WHERE kind = 'webhook.delivery'`).Scan(&args, &state); err != nil {
		t.Fatalf("the delivery job after the kill: %v", err)
	}
	var d struct{ ID string }
	if err := json.Unmarshal(args, &d); err != nil || d.ID == "" {
		t.Fatalf("delivery job args %s: %v", args, err)
	}
	return d.ID, state
}

// dumpJobs logs the jobs and, on PostgreSQL, the backends of a failed
// run's database.
func dumpJobs(t *testing.T, open func() (*sql.DB, error)) {
	if db, err := open(); err == nil {
		rows, _ := db.Query(`SELECT id, kind, state, attempt, queue, scheduled_at, created_at FROM river_job ORDER BY id`)
		for rows != nil && rows.Next() {
			var id, attempt int
			var kind, state, queue string
			var sched, created any
			rows.Scan(&id, &kind, &state, &attempt, &queue, &sched, &created)
			t.Logf("job %d %s %s attempt %d queue %s scheduled %v created %v", id, kind, state, attempt, queue, sched, created)
		}
		// PostgreSQL: who holds what (a dead process's backend
		// holding the job's row would hide it from SKIP LOCKED).
		rows, _ = db.Query(`SELECT pid::text, coalesce(state, ''), left(query, 120) FROM pg_stat_activity WHERE datname = current_database()`)
		for rows != nil && rows.Next() {
			var pid, st, q string
			rows.Scan(&pid, &st, &q)
			t.Logf("backend %s %s: %s", pid, st, q)
		}
		db.Close()
	}
}
