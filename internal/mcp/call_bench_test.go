package mcp_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// BenchmarkMCPCall is one tools/call of tasks_list_teams over Streamable
// HTTP in an open session, on SQLite: what a session's own server (built
// once, at initialize) must not make slower.
func BenchmarkMCPCall(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	a, org := env.Team(b)
	env.CreateTeam(b, a.Token, org, "Platform")
	cs := connect(b, env, bound(b, env, a.Token, "", nil, env.URL+"/mcp"))
	for b.Loop() {
		if res := call(b, cs, "tasks_list_teams", nil); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkListIssues pairs the bench's mcp_tasks_list_issues target (a
// tools/call of tasks_list_issues in a session, raw HTTP as the bench
// sends it) and its stateless form (revision 2026-07-28) with GET
// /tasks/v1/issues, the API call the tool makes, on one server with 10
// issues: run with -cpuprofile or -memprofile to see what a call costs
// beyond the API's (the responses' OpenAPI validation, testenv's, is
// in the profile too: focus on the server's functions).
func BenchmarkListIssues(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	a, org := env.Team(b)
	team := env.CreateTeam(b, a.Token, org, "Platform")
	for range 10 {
		env.Do(b, "POST", "/tasks/v1/issues", a.Token, map[string]any{"teamId": team, "title": "Issue"}).Want(b, 200)
	}
	tok := bound(b, env, a.Token, "", nil, env.URL+"/mcp")
	sid := rpc(b, env, tok, "", "", initialize).Want(b, 200).Header.Get("Mcp-Session-Id")
	rpc(b, env, tok, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Want(b, 202)
	var ids atomic.Int64 // one session: the calls in flight need ids of their own
	body := func() string {
		return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(ids.Add(1), 10) +
			`,"method":"tools/call","params":{"name":"tasks_list_issues","arguments":{"teamId":"` + team + `"}}}`
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	send := func(b *testing.B, req *http.Request) {
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(out), `"isError":true`) {
			b.Fatalf("%d %s", res.StatusCode, out)
		}
	}
	// paired runs the calls of req as name, answered by Gatehouse's fast
	// path, and as name-sdk, by the SDK.
	paired := func(name string, req func() *http.Request) {
		for _, fast := range []bool{true, false} {
			n := name
			if !fast {
				n += "-sdk"
			}
			b.Run(n, func(b *testing.B) {
				defer mcp.SetFastCalls(mcp.SetFastCalls(fast))
				defer cpuPerOp(b)()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						send(b, req())
					}
				})
			})
		}
	}
	mcpPost := func(body string, h http.Header) *http.Request {
		req, _ := http.NewRequest("POST", env.URL+"/mcp", strings.NewReader(body))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		return req
	}
	// In the session (sessioncall.go).
	inSession := http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-06-18"}}
	paired("mcp", func() *http.Request { return mcpPost(body(), inSession) })
	// The same call of revision 2026-07-28 (fastcall.go): no session, its
	// revision in _meta and the headers.
	stateless := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_list_issues","arguments":{"teamId":"` + team +
		`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	modern := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"tasks_list_issues"}}
	paired("stateless", func() *http.Request { return mcpPost(stateless, modern) })
	b.Run("api", func(b *testing.B) {
		defer cpuPerOp(b)()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest("GET", env.URL+"/tasks/v1/issues?teamId="+team, nil)
				req.Header.Set("Authorization", "Bearer "+a.Token)
				send(b, req)
			}
		})
	})
}

// cpuPerOp reports, when the returned function runs, the process's CPU
// time (user and system, client and server alike) per operation since
// cpuPerOp was called: steadier than ns/op on a shared machine.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
