package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMCPProtocolVersions: the server is dual-era. A client of each 2025
// revision (and 2024-11-05) opens a session with initialize and gets its
// revision; a client of 2026-07-28 (the Go SDK's default) is answered
// statelessly, without a session. In each, the tools are those the token's
// scopes allow, a tool answers as the API does, and a write beyond the
// scopes is refused (403 insufficient_scope).
func TestMCPProtocolVersions(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, org := env.Team(t)
		team := env.CreateTeam(t, a.Token, org, "Platform")
		env.Do(t, "POST", "/tasks/v1/issues", a.Token, map[string]any{"teamId": team, "title": "one"}).Want(t, 200)
		read := bound(t, env, a.Token, "tasks:read", nil, env.URL+"/mcp")
		for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
			cs := connectAt(t, env, read, version)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("asked %s, negotiated %s", version, got)
			}
			if stateless := version >= "2026-07-28"; (cs.ID() == "") != stateless {
				t.Fatalf("%s: session id %q", version, cs.ID())
			}
			if names := toolNames(t, cs); !slices.Equal(names, []string{"tasks_get_issue", "tasks_list_issues", "tasks_list_teams"}) {
				t.Fatalf("%s: tools with tasks:read = %v", version, names)
			}
			same(t, env, cs, a.Token, "tasks_list_issues", map[string]any{"teamId": team}, "GET", "/tasks/v1/issues?teamId="+team, nil)
			same(t, env, cs, a.Token, "tasks_get_issue", map[string]any{"id": missing}, "GET", "/tasks/v1/issues/"+missing, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tasks_create_issue", Arguments: map[string]any{"teamId": team, "title": "x"}})
			cancel()
			if err == nil {
				t.Fatalf("%s: a write with tasks:read was not refused", version)
			}
		}
		// Stateless servers are shared by tokens alike, never across
		// scopes; a tool turned off leaves the list and is refused.
		full := connectAt(t, env, bound(t, env, a.Token, "", nil, env.URL+"/mcp"), "2026-07-28")
		ro := connectAt(t, env, read, "2026-07-28")
		if n, r := toolNames(t, full), toolNames(t, ro); len(n) != 19 || len(r) != 3 {
			t.Fatalf("stateless tools: full %v, read-only %v", n, r)
		}
		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			res := call(t, full, "tasks_list_issues", nil)
			names := toolNames(t, full)
			if res.IsError && text(res) == "the tasks tool is not enabled for this workspace" && len(names) == 12 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tasks turned off: call %v %q, tools %v", res.IsError, text(res), names)
			}
		}
		// The scope check comes first in that era too: 403 with the challenge.
		create := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_create_issue","arguments":{"teamId":"` + team + `","title":"x"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		if h := rpcAt(t, env, read, "2026-07-28", "tools/call", create).Want(t, 403).Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) {
			t.Fatalf("stateless write with tasks:read: WWW-Authenticate %q", h)
		}
		// A request of a stateless revision's shape carrying a revision the
		// server does not know is told which it does.
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`
		r := rpcAt(t, env, read, "2099-01-01", "tools/list", body)
		var out struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					Supported []string `json:"supported"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.Body), &out); err != nil || out.Error.Code != -32022 ||
			!slices.Contains(out.Error.Data.Supported, "2026-07-28") || !slices.Contains(out.Error.Data.Supported, "2025-11-25") {
			t.Fatalf("unknown revision: %d %s", r.Status, r.Body)
		}
	})
}
