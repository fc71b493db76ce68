package mcp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// sessionCallBody is a tools/call as a client of a 2025 revision sends
// it in its session: id, tool name and arguments (JSON text, "" for none).
func sessionCallBody(id, name, args string) string {
	a := ""
	if args != "" {
		a = `,"arguments":` + args
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"` + a + `}}`
}

// TestMCPSessionFastCallSameAnswers: a tools/call inside a session is
// answered by Gatehouse's fast path exactly as by the SDK (status,
// Content-Type, Cache-Control and bytes), for results and tool errors
// (not found, another workspace's item, bad input, a tool turned off), a
// token without the scope, and requests the fast path leaves to the SDK:
// another subject's token on the session (403: a session id alone
// grants nothing), an unknown session, a revision without sessions, a
// float id, an unknown tool, _meta, a batch, a field name in another
// case, data after the message. Once the session is deleted, nothing is
// answered by the fast path.
func TestMCPSessionFastCallSameAnswers(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		defer mcp.SetFastCalls(mcp.SetFastCalls(true))
		w := newFastWorld(t, env)
		a, b, org, team, issue, other, tok := w.a, w.b, w.org, w.team, w.issue, w.other, w.tok
		readOnly := bound(t, env, a.Token, "tasks:read", nil, env.URL+"/mcp")
		tokB := bound(t, env, b.Token, "", nil, env.URL+"/mcp")
		sid := rpc(t, env, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
		rpc(t, env, tok, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Want(t, 202)

		type req struct {
			name, id, args string
			body           string      // replaces the message built of the others
			tok            string      // replaces tok
			header         http.Header // replaces the standard headers' values (nil: removes)
			fast           bool        // answered by the fast path
		}
		var cases []req
		for _, c := range fastCalls(team, issue, other) {
			cases = append(cases, req{name: c.name, id: c.id, args: c.args, fast: true})
		}
		cases = append(cases, []req{
			{name: "tasks_list_teams", id: "10", header: http.Header{"Mcp-Protocol-Version": nil}, fast: true},
			{name: "tasks_list_teams", id: "11", header: http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}, fast: true},
			{name: "tasks_list_issues", id: "12", args: `{"teamId":"` + team + `"}`, tok: tokB},
			{name: "tasks_create_issue", id: "13", args: `{"teamId":"` + team + `","title":"no"}`, tok: readOnly},
			{name: "tasks_list_issues", id: "14", args: `{"teamId":"` + team + `"}`, tok: readOnly, fast: true},
			{name: "tasks_list_teams", id: "15", header: http.Header{"Mcp-Session-Id": {"no-such-session"}}},
			{name: "tasks_list_teams", id: "16", header: http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}},
			{name: "tasks_list_teams", id: "17", header: http.Header{"Last-Event-Id": {"x_1"}}},
			{name: "tasks_list_issues", id: "1.0", args: `{"teamId":"` + team + `"}`},
			{name: "no_such_tool", id: "18"},
			{name: "tasks_list_teams", id: "19", body: `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"tasks_list_teams","_meta":{"progressToken":1}}}`},
			{name: "tasks_list_teams", id: "20", body: `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"Name":"tasks_list_teams"}}`},
			{name: "tasks_list_teams", id: "21", body: sessionCallBody("21", "tasks_list_teams", "") + ` {}`},
			{name: "tasks_list_teams", id: "22", body: `[` + sessionCallBody("22", "tasks_list_teams", "") + `]`,
				header: http.Header{"Mcp-Protocol-Version": {"2025-03-26"}}},
			{name: "tasks_list_teams", id: "23", args: strings.Repeat("[", 1001) + strings.Repeat("]", 1001)},
		}...)
		send := func(c req) *testenv.Resp {
			h := http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-06-18"}}
			for k, v := range c.header {
				if v == nil {
					delete(h, k)
				} else {
					h[k] = v
				}
			}
			body := c.body
			if body == "" {
				body = sessionCallBody(c.id, c.name, c.args)
			}
			return post(t, env, cmpOr(c.tok, tok), h, body)
		}
		compare := func(when string, fastOK bool) {
			for _, c := range cases {
				fast := sameAnswer(t, fmt.Sprintf("%s %s id %s", when, c.name, c.id), c.fast && fastOK, func() *testenv.Resp { return send(c) })
				if when == "Tasks on" && c.id == "1" && !strings.Contains(string(fast.Body), `\u003cFast\u003e \u0026`) {
					t.Fatalf("the issue's title as sent: %s", fast.Body)
				}
				if c.tok == tokB && fastOK && (fast.Status != 403 || strings.Contains(string(fast.Body), "Platform")) {
					t.Fatalf("another subject's token on the session: %d %s", fast.Status, fast.Body)
				}
			}
		}
		compare("Tasks on", true)
		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		waitSessionRefused(t, env, tok, sid, "tasks_list_teams")
		compare("Tasks off", true)
		del, err := http.NewRequest("DELETE", env.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		del.Header = http.Header{"Authorization": {"Bearer " + tok}, "Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-06-18"}}
		if r, err := env.Send(del); err != nil || r.Status != 204 {
			t.Fatalf("DELETE: %v %v", r, err)
		}
		compare("deleted", false)
	})
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// waitSessionRefused waits until a call of tool in the session answers
// the tool's refusal (the enabled tools are cached for 2 s).
func waitSessionRefused(t *testing.T, env *testenv.Env, tok, sid, tool string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if r := rpc(t, env, tok, sid, "", sessionCallBody("1", tool, "")); strings.Contains(string(r.Body), "is not enabled for this workspace") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s still answers after the tool was turned off", tool)
}

// TestMCPSessionIdle: a session whose POSTs are all answered by the fast
// path (which the SDK never sees) is kept while they come, and ended
// once none has come for 30 minutes by the server's clock.
func TestMCPSessionIdle(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		mcp.SetNow(env.MCP, env.Clock.Now)
		a, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		sid := rpc(t, env, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
		list := sessionCallBody("2", "tasks_list_teams", "")
		for range 2 {
			env.Clock.Advance(29 * time.Minute)
			time.Sleep(2500 * time.Millisecond) // one tick of the session's watcher
			before := mcp.FastAnswered()
			rpc(t, env, tok, sid, "", list).Want(t, 200)
			if mcp.FastAnswered() == before {
				t.Fatal("the call was not the fast path's")
			}
		}
		tok = bound(t, env, a.Token, "", nil, env.URL+"/mcp") // the first expires before the session
		env.Clock.Advance(30 * time.Minute)
		// Polled without a request of the session, which would keep it.
		for deadline := time.Now().Add(10 * time.Second); mcp.Established(env.MCP, sid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the session was not ended after 30 idle minutes")
			}
		}
		rpc(t, env, tok, sid, "", list).Want(t, 404)
	})
}
