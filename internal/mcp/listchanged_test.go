package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// streaming starts an MCP session with tok whose GET stream is open;
// changed receives each notifications/tools/list_changed.
func streaming(t testing.TB, env *testenv.Env, tok string) (cs *sdk.ClientSession, changed <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "gatehouse-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case ch <- struct{}{}:
			default:
			}
		}})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: tok}}},
		&sdk.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ch
}

// notified waits for a list_changed notification (the watcher reads the
// workspace every 2 s through a 2 s cache; the bound is generous).
func notified(t testing.TB, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", what)
	}
}

// withPrefix lists the names starting with prefix.
func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// TestMCPToolListChanged: turning a tool off in the workspace (PUT
// /v1/orgs/{id}/tools) sends notifications/tools/list_changed on an open
// session's stream, its tools leave tools/list, and calling one answers
// isError with the API's refusal though the session's token still lists
// the tool, and its items leave resources/list; turning it on again brings
// them back and they work. A session of another workspace is not changed.
func TestMCPToolListChanged(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, org := env.Team(t)
		b, _ := env.Team(t)
		_, _, all := testenv.TokenOrg(t, a.Token)
		team := env.CreateTeam(t, a.Token, org, "Platform")
		env.Do(t, "POST", "/tasks/v1/issues", a.Token, map[string]any{"teamId": team, "title": "Context"}).Want(t, 200)
		cs, changed := streaming(t, env, bound(t, env, a.Token, "", nil, env.URL+"/mcp"))
		other := connect(t, env, bound(t, env, b.Token, "", nil, env.URL+"/mcp"))
		before := toolNames(t, cs)
		if len(withPrefix(before, "tasks_")) != 7 {
			t.Fatalf("tools before = %v", before)
		}

		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		notified(t, changed, "tasks turned off")
		after := toolNames(t, cs)
		if got := withPrefix(after, "tasks_"); len(got) != 0 || len(after) != len(before)-7 {
			t.Fatalf("tools after tasks turned off = %v", after)
		}
		// The refusal is the API's to a token that does not list the tool.
		without := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "tasks" })
		res := same(t, env, cs, bound(t, env, a.Token, "", without), "tasks_list_issues", nil, "GET", "/tasks/v1/issues", nil)
		if !strings.Contains(text(res), "not enabled") {
			t.Fatalf("tasks_list_issues when off: %q", text(res))
		}
		// Nor are its issues resources any more.
		if rs, err := cs.ListResources(context.Background(), nil); err != nil || len(rs.Resources) != 0 {
			t.Fatalf("resources when tasks is off: %v %v", rs, err)
		}
		// Another workspace's session keeps its tools.
		if got := withPrefix(toolNames(t, other), "tasks_"); len(got) != 7 {
			t.Fatalf("another workspace's tools = %v", toolNames(t, other))
		}

		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": true}).Want(t, 200)
		notified(t, changed, "tasks turned on")
		if got := toolNames(t, cs); !slices.Equal(got, before) {
			t.Fatalf("tools after tasks turned on = %v; want %v", got, before)
		}
		if res := call(t, cs, "tasks_list_issues", nil); res.IsError {
			t.Fatalf("tasks_list_issues when on again: %s", text(res))
		}
		if rs, err := cs.ListResources(context.Background(), nil); err != nil || len(rs.Resources) != 1 {
			t.Fatalf("resources when tasks is on again: %v %v", rs, err)
		}
	})
}

// TestMCPListKeepsScope: a session's tool set follows the workspace and
// never passes the token: a tasks:read session gets back only the read
// tools when Tasks is turned on again, and Links, on in the workspace but
// not listed by the token, stays out and refused.
func TestMCPListKeepsScope(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, org := env.Team(t)
		cs, changed := streaming(t, env, bound(t, env, a.Token, "tasks:read links:read", []string{"tasks", "forms"}, env.URL+"/mcp"))
		want := []string{"tasks_get_issue", "tasks_list_issues", "tasks_list_teams"} // tools/list is by name
		if got := toolNames(t, cs); !slices.Equal(got, want) {
			t.Fatalf("tools = %v; want %v", got, want)
		}
		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": false}).Want(t, 200)
		notified(t, changed, "tasks turned off")
		if got := toolNames(t, cs); len(got) != 0 {
			t.Fatalf("tools after tasks turned off = %v", got)
		}
		env.Do(t, "PUT", "/v1/orgs/"+org+"/tools", a.Token, map[string]any{"tool": "tasks", "enabled": true}).Want(t, 200)
		notified(t, changed, "tasks turned on")
		if got := toolNames(t, cs); !slices.Equal(got, want) {
			t.Fatalf("tools after tasks turned on = %v; want %v", got, want)
		}
		// Links, which the token does not list, stays refused by the token.
		if res := call(t, cs, "links_list_links", nil); !res.IsError || !strings.Contains(text(res), "links tool is not enabled") {
			t.Fatalf("links_list_links: %v %q", res.IsError, text(res))
		}
	})
}
