package mcp_test

import (
	"bytes"
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
		a, org := env.Team(t)
		b, orgB := env.Team(t)
		team := env.CreateTeam(t, a.Token, org, "Platform")
		issue := env.Do(t, "POST", "/tasks/v1/issues", a.Token, map[string]any{"teamId": team, "title": "<Fast> & \"slow\" ünïcode"}).Want(t, 200).Str("issue.id")
		teamB := env.CreateTeam(t, b.Token, orgB, "Other")
		other := env.Do(t, "POST", "/tasks/v1/issues", b.Token, map[string]any{"teamId": teamB, "title": "theirs"}).Want(t, 200).Str("issue.id")
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")

		type req struct {
			name, id, args, meta string
			body                 string      // replaces the message built of the others
			header               http.Header // replaces the standard headers' values
			fast                 bool        // answered by the fast path
		}
		cases := []req{
			{name: "tasks_list_issues", id: "1", args: `{"teamId":"` + team + `"}`, fast: true},
			{name: "tasks_list_issues", id: `"call-2"`, args: `{"teamId":"` + team + `","limit":1}`, fast: true},
			{name: "tasks_list_teams", id: "3", fast: true},
			{name: "tasks_get_issue", id: "4", args: `{"id":"` + issue + `"}`, fast: true},
			{name: "tasks_get_issue", id: "5", args: `{"id":"` + missing + `"}`, fast: true},
			{name: "tasks_get_issue", id: "6", args: `{"id":"` + other + `"}`, fast: true},
			{name: "tasks_create_issue", id: "7", args: `{"teamId":"` + team + `","title":5}`, fast: true},
			{name: "tasks_list_issues", id: "8", args: `{"deleted":"maybe"}`, fast: true},
			{name: "links_list_links", id: "-9", args: `null`, fast: true},
			{name: "tasks_list_issues", id: "1.0", args: `{"teamId":"` + team + `"}`},
			{name: "tasks_list_issues", id: "10", header: http.Header{"Mcp-Name": {"tasks_get_issue"}}},
			{name: "tasks_list_issues", id: "11", meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`},
			{name: "no_such_tool", id: "12"},
			{name: "tasks_list_teams", id: "13", body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"Name":"tasks_list_teams","_meta":` + modernMeta + `}}`},
			{name: "tasks_list_teams", id: "14", args: strings.Repeat("[", 1001) + strings.Repeat("]", 1001)},
			{name: "tasks_list_teams", id: "15", body: statelessCall("15", "tasks_list_teams", "", modernMeta) + ` {}`},
		}
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
				mcp.SetFastCalls(false)
				sdkAnswer := send(c)
				mcp.SetFastCalls(true)
				before := mcp.FastAnswered()
				fast := send(c)
				if went := mcp.FastAnswered() > before; went != c.fast {
					t.Fatalf("%s %s id %s: answered by the fast path %v, want %v", when, c.name, c.id, went, c.fast)
				}
				if fast.Status != sdkAnswer.Status || fast.Header.Get("Content-Type") != sdkAnswer.Header.Get("Content-Type") ||
					fast.Header.Get("Cache-Control") != sdkAnswer.Header.Get("Cache-Control") || !bytes.Equal(fast.Body, sdkAnswer.Body) {
					t.Fatalf("%s %s id %s:\nthe SDK: %d %s %s\nfast:    %d %s %s", when, c.name, c.id,
						sdkAnswer.Status, sdkAnswer.Header.Get("Content-Type"), sdkAnswer.Body, fast.Status, fast.Header.Get("Content-Type"), fast.Body)
				}
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
