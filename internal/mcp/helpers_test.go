package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// fastWorld is the fast path tests' fixture: a's workspace org with team
// "Platform" and an issue whose title needs escaping, b's workspace with
// an issue of its own (other), and tok, an MCP-bound token of a.
type fastWorld struct {
	a, b                    *testenv.Account
	org, team, issue, other string
	tok                     string
}

func newFastWorld(t testing.TB, env *testenv.Env) fastWorld {
	t.Helper()
	var w fastWorld
	var orgB string
	w.a, w.org = env.Team(t)
	w.b, orgB = env.Team(t)
	w.team = env.CreateTeam(t, w.a.Token, w.org, "Platform")
	w.issue = env.Do(t, "POST", "/tasks/v1/issues", w.a.Token, map[string]any{"teamId": w.team, "title": "<Fast> & \"slow\" ünïcode"}).Want(t, 200).Str("issue.id")
	teamB := env.CreateTeam(t, w.b.Token, orgB, "Other")
	w.other = env.Do(t, "POST", "/tasks/v1/issues", w.b.Token, map[string]any{"teamId": teamB, "title": "theirs"}).Want(t, 200).Str("issue.id")
	w.tok = bound(t, env, w.a.Token, "", nil, env.URL+"/mcp")
	return w
}

// bound forges an OAuth access token of like's subject and workspace,
// bound to resources (none: unbound) with scope, the workspace's enabled
// tools being tools (nil: like's).
func bound(t testing.TB, env *testenv.Env, like string, scope string, tools []string, resources ...string) string {
	t.Helper()
	org, role, likeTools := testenv.TokenOrg(t, like)
	if tools == nil {
		tools = likeTools
	}
	aud := jwt.ClaimStrings{"gatehouse"}
	aud = append(aud, resources...)
	return env.ForgeToken(t, like, token.Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: aud}, Via: "oauth",
		Org: token.OrgClaim{ID: org, Role: role, Tools: tools}, Scope: scope, SessionID: testenv.SID(t, like)})
}

// bearer adds a token to every request of the SDK's client.
type bearer struct {
	token  string
	origin string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// legacy is the protocol revision the tests' sessions speak: the latest
// with sessions (initialize), which the list-changed notifications, the
// session binding and the session cap need. protocol_test.go speaks each.
const legacy = "2025-11-25"

// connect starts an MCP session with tok through the Go SDK's client.
func connect(t testing.TB, env *testenv.Env, tok string) *sdk.ClientSession {
	t.Helper()
	return connectAt(t, env, tok, legacy)
}

// connectAt connects the Go SDK's client with tok, asking for the
// protocol revision version: a session (initialize) before 2026-07-28,
// else server/discover and stateless requests.
func connectAt(t testing.TB, env *testenv.Env, tok, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "gatehouse-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: tok}},
		DisableStandaloneSSE: true}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool; args may be a map or raw JSON text.
func call(t testing.TB, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	if s, ok := args.(string); ok {
		args = json.RawMessage(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text is a tool result's text.
func text(r *sdk.CallToolResult) string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// toolNames lists the tools the session sees.
func toolNames(t testing.TB, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// generic is v as JSON decodes it, for comparisons.
func generic(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// same calls the tool and the HTTP API for the same request and checks
// they agree: an error with the same message (isError), or the same
// answer (a list tool's nextCursor aside). It returns the tool's result.
func same(t testing.TB, env *testenv.Env, cs *sdk.ClientSession, apiToken, tool string, args any, method, path string, body any) *sdk.CallToolResult {
	t.Helper()
	res := call(t, cs, tool, args)
	api := env.Do(t, method, path, apiToken, body)
	if api.Status != 200 {
		msg, _ := api.JSON()["error"].(string)
		if !res.IsError || text(res) != msg {
			t.Fatalf("%s: isError %v %q; the API answered %d %q", tool, res.IsError, text(res), api.Status, msg)
		}
		return res
	}
	if res.IsError {
		t.Fatalf("%s: isError %q; the API answered 200 %s", tool, text(res), api.Body)
	}
	got, _ := generic(t, res.StructuredContent).(map[string]any)
	delete(got, "nextCursor")
	want := api.JSON()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: structuredContent\n%v\nthe API's\n%v", tool, got, want)
	}
	if text(res) == "" {
		t.Fatalf("%s: no text content", tool)
	}
	return res
}
