package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Every line problemRE matches passes the cheap check first, in each
// alternative's spelling; a plain sign-in line passes neither.
func TestProblemWordsCoverExpression(t *testing.T) {
	problems := []string{
		`time=x level=ERROR msg="x"`, `time=x level=warn msg="x"`, `{"level":"ERROR","msg":"x"}`,
		`{"level": "Warn"}`, `2026/11/28 ERROR x`, `WARN disk`, `Panic: runtime error`, `FATAL x`,
		`goroutine 12 [running]:`, `Database is locked`, `SQLITE_BUSY`, `the writer was Busy`, `DEADLOCK detected`,
		`could not serialize access`, `too many connections`, `too many clients already`, `context deadline exceeded`,
		`method=GET status=503 path=/x`, `{"status": 500}`,
	}
	for _, line := range problems {
		if !problemRE.MatchString(line) {
			t.Fatalf("test line %q does not match problemRE", line)
		}
		if !mayBeProblem(line) {
			t.Errorf("mayBeProblem(%q) = false for a line problemRE matches", line)
		}
	}
	ok := `time=2026-11-28T21:58:02.030Z level=INFO msg="security event" event=auth.signin.success ` +
		`request_id=be483598423913d9 ip=127.0.0.1 user_agent=Go-http-client/1.1 method=passkey second_factor_owed=false`
	if mayBeProblem(ok) || problemRE.MatchString(ok) {
		t.Errorf("a sign-in line is taken for a problem: %q", ok)
	}
}

// consume copies every line to the file, buffered, and counts the problem
// lines among them.
func TestConsumeWritesEveryLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want strings.Builder
	for i := range 5000 {
		if i%1000 == 7 {
			want.WriteString("time=x level=ERROR msg=\"database is locked\"\n")
			continue
		}
		want.WriteString("time=x level=INFO msg=\"security event\" event=auth.signin.success\n")
	}
	r, w := io.Pipe()
	go func() {
		io.WriteString(w, want.String())
		w.Close()
	}()
	l := newLogWatch()
	l.consume(r, f, &sync.Mutex{})
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("the file holds %d bytes, want the %d written", len(got), want.Len())
	}
	if c := l.snapshot(); c.lines != 5000 || c.problems != 5 {
		t.Errorf("counted %d lines and %d problems, want 5000 and 5", c.lines, c.problems)
	}
}

// The server's CPU time per answer comes from its ticks over the window
// and counts the late answers the window's CPU time includes.
func TestServerCPUPerRequest(t *testing.T) {
	a := cpuSample{total: 1000, busy: 100, server: 50, bench: 10, ok: true}
	b := cpuSample{total: 2000, busy: 1000, server: 650, bench: 110, ok: true}
	c := share(a, b)
	if c == nil || c.ServerSeconds != 6 || c.Server != 60 {
		t.Fatalf("share = %+v; want 6 server seconds, 60%%", c)
	}
	x := &row{Requests: 11_000, Late: 1_000, CPU: c}
	if got := serverCPUPerReq(x); got != 500 {
		t.Errorf("server CPU per request = %v µs; want 500", got)
	}
	for _, x := range []*row{{Requests: 10}, {CPU: c}, {Requests: 10, CPU: &cpuShare{}}} {
		if got := serverCPUPerReq(x); got != 0 {
			t.Errorf("server CPU per request of %+v = %v; want 0 (unknown)", x, got)
		}
	}
}
