package mcp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// statelessCall is a tools/call of revision 2026-07-28 as a client sends
// it: id, tool name, arguments (JSON text, "" for none) and its _meta.
func statelessCall(id, name, args, meta string) string {
	a := ""
	if args != "" {
		a = `"arguments":` + args + `,`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `",` + a + `"_meta":` + meta + `}}`
}

const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

// TestMCPFastCallSameAnswers: a stateless tools/call is answered by
// Gatehouse's fast path exactly as by the SDK: the same status, content
// type, cache control and bytes, for results, tool errors (not found, bad
// input, another workspace's item, a tool turned off) and requests the
// fast path leaves to the SDK (a float id, a mismatched header, no client
// capabilities, an unknown tool, a field name in another case, nesting
// deeper than the SDK reads, data after the message); the well-formed
// calls are the fast path's.
func TestMCPFastCallSameAnswers(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		defer mcp.SetFastCalls(mcp.SetFastCalls(true))
		w := newFastWorld(t, env)
		a, org, team, issue, other, tok := w.a, w.org, w.team, w.issue, w.other, w.tok

		type req struct {
			name, id, args, meta string
			body                 string      // replaces the message built of the others
			header               http.Header // replaces the standard headers' values
			fast                 bool        // answered by the fast path
		}
		var cases []req
		for _, c := range fastCalls(team, issue, other) {
			cases = append(cases, req{name: c.name, id: c.id, args: c.args, fast: true})
		}
		cases = append(cases, []req{
			{name: "tasks_list_issues", id: "1.0", args: `{"teamId":"` + team + `"}`},
			{name: "tasks_list_issues", id: "10", header: http.Header{"Mcp-Name": {"tasks_get_issue"}}},
			{name: "tasks_list_issues", id: "11", meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`},
			{name: "no_such_tool", id: "12"},
			{name: "tasks_list_teams", id: "13", body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"Name":"tasks_list_teams","_meta":` + modernMeta + `}}`},
			{name: "tasks_list_teams", id: "14", args: strings.Repeat("[", 1001) + strings.Repeat("]", 1001)},
			{name: "tasks_list_teams", id: "15", body: statelessCall("15", "tasks_list_teams", "", modernMeta) + ` {}`},
		}...)
		send := func(c req) *testenv.Resp {
			meta := c.meta
			if meta == "" {
				meta = modernMeta
			}
			h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {c.name}}
			for k, v := range c.header {
				h[k] = v
			}
			body := c.body
			if body == "" {
				body = statelessCall(c.id, c.name, c.args, meta)
			}
			return post(t, env, tok, h, body)
		}
		compare := func(when string) {
			for _, c := range cases {
				fast := sameAnswer(t, fmt.Sprintf("%s %s id %s", when, c.name, c.id), c.fast, func() *testenv.Resp { return send(c) })
				if when == "Tasks on" && c.fast && strings.Contains(c.name, "list_issues") && c.id == "1" && !strings.Contains(string(fast.Body), `\u003cFast\u003e \u0026`) {
					t.Fatalf("the issue's title as sent: %s", fast.Body)
				}
			}
		}
		compare("Tasks on")
		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		for _, c := range cases {
			if c.fast && strings.HasPrefix(c.name, "tasks_") {
				waitRefused(t, env, tok, c.name)
				break
			}
		}
		compare("Tasks off")
	})
}

// waitRefused waits until a stateless call of tool answers the tool's
// refusal (the enabled tools are cached for 2 s).
func waitRefused(t *testing.T, env *testenv.Env, tok, tool string) {
	t.Helper()
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {tool}}
	for i := 0; i < 100; i++ {
		if r := post(t, env, tok, h, statelessCall("1", tool, "", modernMeta)); strings.Contains(string(r.Body), "is not enabled for this workspace") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s still answers after the tool was turned off", tool)
}

// sameAnswer sends a request (send) with the fast path off, then on, and
// checks both answers have the same status, Content-Type, Cache-Control,
// Mcp-Session-Id and bytes, and that the fast path answered it when fast;
// it returns the fast path's answer.
func sameAnswer(t *testing.T, what string, fast bool, send func() *testenv.Resp) *testenv.Resp {
	t.Helper()
	mcp.SetFastCalls(false)
	sdkAnswer := send()
	mcp.SetFastCalls(true)
	before := mcp.FastAnswered()
	got := send()
	if went := mcp.FastAnswered() > before; went != fast {
		t.Fatalf("%s: answered by the fast path %v, want %v", what, went, fast)
	}
	for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
		if got.Header.Get(h) != sdkAnswer.Header.Get(h) {
			t.Fatalf("%s: %s %q; the SDK's %q", what, h, got.Header.Get(h), sdkAnswer.Header.Get(h))
		}
	}
	if got.Status != sdkAnswer.Status || !bytes.Equal(got.Body, sdkAnswer.Body) {
		t.Fatalf("%s:\nthe SDK: %d %s\nfast:    %d %s", what, sdkAnswer.Status, sdkAnswer.Body, got.Status, got.Body)
	}
	return got
}

// fastCallCase is a tools/call both fast paths answer (name, id, arguments):
// results and tool errors.
type fastCallCase struct{ name, id, args string }

// fastCalls are the tools/call each fast path's comparison sends, in a
// workspace with team and issue, other being another workspace's issue:
// lists, a page, an item, not found, another workspace's item, bad input
// and no arguments.
func fastCalls(team, issue, other string) []fastCallCase {
	return []fastCallCase{
		{"tasks_list_issues", "1", `{"teamId":"` + team + `"}`},
		{"tasks_list_issues", `"call-2"`, `{"teamId":"` + team + `","limit":1}`},
		{"tasks_list_teams", "3", ""},
		{"tasks_get_issue", "4", `{"id":"` + issue + `"}`},
		{"tasks_get_issue", "5", `{"id":"` + missing + `"}`},
		{"tasks_get_issue", "6", `{"id":"` + other + `"}`},
		{"tasks_create_issue", "7", `{"teamId":"` + team + `","title":5}`},
		{"tasks_list_issues", "8", `{"deleted":"maybe"}`},
		{"links_list_links", "-9", `null`},
	}
}
