package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// rpc posts one JSON-RPC message to the MCP server as a client would.
func rpc(t testing.TB, env *testenv.Env, tok, session, origin, body string) *testenv.Resp {
	t.Helper()
	h := http.Header{}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
		h.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return post(t, env, tok, h, body)
}

// rpcAt posts one JSON-RPC message (of method) of protocol revision
// version without a session, as a client of the stateless revisions does.
func rpcAt(t testing.TB, env *testenv.Env, tok, version, method, body string) *testenv.Resp {
	t.Helper()
	return post(t, env, tok, http.Header{"Mcp-Protocol-Version": {version}, "Mcp-Method": {method}}, body)
}

// post sends body to the MCP URL with tok (if any) and the headers h.
func post(t testing.TB, env *testenv.Env, tok string, h http.Header, body string) *testenv.Resp {
	t.Helper()
	req, err := http.NewRequest("POST", env.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	r, err := env.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMCPProtectedResource checks the discovery a client starts from: the
// 401 without a token names the resource metadata, which names the MCP URL,
// the issuer and the scopes.
func TestMCPProtectedResource(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := rpc(t, env, "", "", "", initialize).Want(t, 401)
		meta := env.URL + "/.well-known/oauth-protected-resource/mcp"
		if got := r.Header.Get("WWW-Authenticate"); got != `Bearer resource_metadata="`+meta+`"` {
			t.Fatalf("WWW-Authenticate = %q", got)
		}
		m := env.Do(t, "GET", "/.well-known/oauth-protected-resource/mcp", "", nil).Want(t, 200)
		if m.Str("resource") != env.URL+"/mcp" || !slices.Equal(testenv.Strings(m.Get("authorization_servers")), []string{env.URL}) ||
			!slices.Contains(testenv.Strings(m.Get("scopes_supported")), "tasks:write") {
			t.Fatalf("metadata = %s", m.Body)
		}
	})
}

// TestMCPAudience is the audience matrix: only a token bound to the MCP
// URL reaches the MCP server, and such a token reaches nothing else.
func TestMCPAudience(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		mcpTok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		for name, tok := range map[string]string{
			"unbound":       bound(t, env, a.Token, "", nil),
			"sign-in token": a.Token,
			"tasks API":     bound(t, env, a.Token, "", nil, env.URL+"/tasks"),
			"tool APIs":     bound(t, env, a.Token, "", nil, env.URL),
			"MCP subpath":   bound(t, env, a.Token, "", nil, env.URL+"/mcp/x"),
			"garbage":       "not-a-token",
		} {
			r := rpc(t, env, tok, "", "", initialize).Want(t, 401)
			if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) || !strings.Contains(h, "oauth-protected-resource/mcp") {
				t.Fatalf("%s: WWW-Authenticate = %q", name, h)
			}
		}
		rpc(t, env, mcpTok, "", "", initialize).Want(t, 200)
		env.Do(t, "GET", "/tasks/v1/issues", mcpTok, nil).Want(t, 401)
		env.Do(t, "GET", "/links/v1/links", mcpTok, nil).Want(t, 401)
		env.Do(t, "GET", "/v1/me/orgs", mcpTok, nil).Want(t, 401)
		// Token requests: resource={mcp_url} is a known resource.
		rs := env.Do(t, "POST", "/oauth/device/authorization", "", "client_id=nope&resource="+env.URL+"/mcp/other")
		if rs.Status == 200 {
			t.Fatalf("a resource under the MCP URL was accepted: %s", rs.Body)
		}
	})
}

// TestMCPOrigin refuses a browser page of another origin.
func TestMCPOrigin(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		rpc(t, env, tok, "", "https://evil.example", initialize).Want(t, 403)
		rpc(t, env, tok, "", "null", initialize).Want(t, 403)
		rpc(t, env, tok, "", env.URL, initialize).Want(t, 200)
	})
}

// TestMCPSessionBinding: a session continues only with a token of the
// subject and workspace that started it; its id alone grants nothing.
func TestMCPSessionBinding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		other, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		sid := rpc(t, env, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatal("no session id")
		}
		rpc(t, env, tok, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Want(t, 202)
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		rpc(t, env, tok, sid, "", list).Want(t, 200)
		rpc(t, env, "", sid, "", list).Want(t, 401)
		rpc(t, env, bound(t, env, other.Token, "", nil, env.URL+"/mcp"), sid, "", list).Want(t, 403)
		// The same person in another workspace: their personal one.
		personal := env.Do(t, "POST", "/v1/auth/switch-org", a.Token, map[string]string{"org_id": a.OrgID}).Want(t, 200).Str("access_token")
		rpc(t, env, bound(t, env, personal, "", nil, env.URL+"/mcp"), sid, "", list).Want(t, 403)
		// A second token of the same subject and workspace continues it.
		rpc(t, env, bound(t, env, a.Token, "tasks:read", nil, env.URL+"/mcp"), sid, "", list).Want(t, 200)
		rpc(t, env, tok, "nope", "", list).Want(t, 404)
	})
}

// TestMCPScopes: tools/list shows what the token's scopes allow, a call
// beyond them answers 403 insufficient_scope naming the scope (the
// step-up), and a token with the write scope calls it.
func TestMCPScopes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, org := env.Team(t)
		team := env.CreateTeam(t, a.Token, org, "Platform")
		read := bound(t, env, a.Token, "tasks:read", nil, env.URL+"/mcp")
		cs := connect(t, env, read)
		if names := toolNames(t, cs); !slices.Equal(names, []string{"tasks_get_issue", "tasks_list_issues", "tasks_list_teams"}) {
			t.Fatalf("tools with tasks:read = %v", names)
		}
		create := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tasks_create_issue","arguments":{"teamId":"` + team + `","title":"x"}}}`
		r := rpc(t, env, read, "", "", create).Want(t, 403)
		h := r.Header.Get("WWW-Authenticate")
		if !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="tasks:read tasks:write"`) || !strings.Contains(h, "it needs tasks:write") {
			t.Fatalf("WWW-Authenticate = %q", h)
		}
		batch := `[` + create + `,{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"links_create_link","arguments":{}}}]`
		if h := rpc(t, env, read, "", "", batch).Want(t, 403).Header.Get("WWW-Authenticate"); !strings.Contains(h, `scope="tasks:read tasks:write links:write"`) {
			t.Fatalf("batch WWW-Authenticate = %q", h)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tasks_create_issue", Arguments: map[string]any{"teamId": team, "title": "x"}}); err == nil {
			t.Fatal("a write with tasks:read was not refused")
		}
		// Stepped up: a token with both scopes continues.
		up := connect(t, env, bound(t, env, a.Token, "tasks:read tasks:write", nil, env.URL+"/mcp"))
		if res := call(t, up, "tasks_create_issue", map[string]any{"teamId": team, "title": "x"}); res.IsError {
			t.Fatalf("stepped up: %s", text(res))
		}
		// Write alone does not read (docs/decisions.md): the reads are not listed.
		w := connect(t, env, bound(t, env, a.Token, "tasks:write", nil, env.URL+"/mcp"))
		if names := toolNames(t, w); slices.Contains(names, "tasks_get_issue") || !slices.Contains(names, "tasks_create_issue") {
			t.Fatalf("tools with tasks:write = %v", names)
		}
	})
}

// TestMCPDisabledTool: a tool the workspace turned off is not listed and
// its tools answer the API's refusal.
func TestMCPDisabledTool(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		tools := []string{"tasks", "forms", "sign"}
		cs := connect(t, env, bound(t, env, a.Token, "", tools, env.URL+"/mcp"))
		if names := toolNames(t, cs); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "links_") }) || len(names) != 14 {
			t.Fatalf("tools without links = %v", names)
		}
		same(t, env, cs, bound(t, env, a.Token, "", tools), "links_list_links", nil, "GET", "/links/v1/links", nil)
	})
}

// TestMCPSessionCap: one account keeps at most mcp.MaxSessions sessions
// open in a workspace; the next initialize is 429 until one ends.
func TestMCPSessionCap(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		other, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		var first string
		for i := range mcp.MaxSessions {
			sid := rpc(t, env, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
			if i == 0 {
				first = sid
			}
		}
		r := rpc(t, env, tok, "", "", initialize).Want(t, 429)
		if !strings.Contains(r.Str("error"), "too many open MCP sessions") {
			t.Fatalf("429 = %s", r.Body)
		}
		// Another account is not held back by this one's sessions.
		rpc(t, env, bound(t, env, other.Token, "", nil, env.URL+"/mcp"), "", "", initialize).Want(t, 200)
		req, _ := http.NewRequest("DELETE", env.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Mcp-Session-Id", first)
		if res, err := env.Send(req); err != nil || res.Status != 204 {
			t.Fatalf("DELETE: %v %v", res, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for rpc(t, env, tok, "", "", initialize).Status != 200 {
			if time.Now().After(deadline) {
				t.Fatal("a session's end did not free its place")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestMCPInstances: three instances on one database. A session lives on
// the instance that started it; another instance answers its id 404, the
// transport's signal to initialize again, which works there with the same
// token, and the tools see the same data.
func TestMCPInstances(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		envs := []*testenv.Env{env, env.Another(t), env.Another(t)}
		a, org := env.Team(t)
		team := env.CreateTeam(t, a.Token, org, "Platform")
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		sid := rpc(t, envs[0], tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
		create := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tasks_create_issue","arguments":{"teamId":"` + team + `","title":"on one"}}}`
		rpc(t, envs[0], tok, sid, "", create).Want(t, 200)
		list := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tasks_list_issues","arguments":{}}}`
		for _, other := range envs[1:] {
			rpc(t, other, tok, sid, "", list).Want(t, 404)
			again := rpc(t, other, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
			r := rpc(t, other, tok, again, "", list).Want(t, 200)
			if !strings.Contains(string(r.Body), `"on one"`) {
				t.Fatalf("the issue made on one instance is not listed on another: %s", r.Body)
			}
		}
	})
}

// TestMCPRateLimit: with the abuse limits on, a token's grant gets a burst
// of requests, then 429 with Retry-After until its bucket refills.
func TestMCPRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		tok := bound(t, env, a.Token, "", nil, env.URL+"/mcp")
		other := bound(t, env, env.Register(t).Token, "", nil, env.URL+"/mcp")
		sid := rpc(t, env, tok, "", "", initialize).Want(t, 200).Header.Get("Mcp-Session-Id")
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		n := 1
		for ; n < 1000; n++ {
			if rpc(t, env, tok, sid, "", list).Status == 429 {
				break
			}
		}
		if n != 300 {
			t.Fatalf("refused after %d requests; want 300", n)
		}
		r := rpc(t, env, tok, sid, "", list).Want(t, 429)
		if r.Header.Get("Retry-After") == "" || !strings.Contains(r.Str("error"), "too many MCP requests") {
			t.Fatalf("429 = %v %s", r.Header, r.Body)
		}
		rpc(t, env, other, "", "", initialize).Want(t, 200) // another grant is not held back
		env.Clock.Advance(time.Second)
		rpc(t, env, tok, sid, "", list).Want(t, 200)
	})
}

// TestMCPEveryToolRefusals: every tool, with its module turned off, is a
// tool error with the API's text; beyond the token's scopes, a 403
// insufficient_scope naming its own scope.
func TestMCPEveryToolRefusals(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, _ := env.Team(t)
		full := connect(t, env, bound(t, env, a.Token, "", nil, env.URL+"/mcp"))
		list, err := full.ListTools(context.Background(), nil)
		if err != nil || len(list.Tools) != 19 {
			t.Fatalf("tools: %v %v", list, err)
		}
		for _, tl := range list.Tools {
			module, _, _ := strings.Cut(tl.Name, "_")
			access := "write"
			if tl.Annotations != nil && tl.Annotations.ReadOnlyHint {
				access = "read"
			}
			var others []string
			for _, m := range []string{"tasks", "links", "forms", "sign"} {
				if m != module {
					others = append(others, m)
				}
			}
			off := connect(t, env, bound(t, env, a.Token, "", others, env.URL+"/mcp"))
			if r := call(t, off, tl.Name, map[string]any{"id": missing}); !r.IsError || text(r) != "the "+module+" tool is not enabled for this workspace" {
				t.Fatalf("%s with %s off: %v %q", tl.Name, module, r.IsError, text(r))
			}
			scope := others[0] + ":read " + others[0] + ":write"
			body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"` + tl.Name + `","arguments":{}}}`
			r := rpc(t, env, bound(t, env, a.Token, scope, nil, env.URL+"/mcp"), "", "", body).Want(t, 403)
			if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, "it needs "+module+":"+access) {
				t.Fatalf("%s with %s: WWW-Authenticate %q", tl.Name, scope, h)
			}
		}
	})
}
