package binary

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// TestBinaryMCPShutdown: SIGTERM ends the open MCP sessions, so a
// client's GET stream ends at once and the binary exits within its drain
// (0 s here) and a few seconds, not after Shutdown's 30 s bound.
func TestBinaryMCPShutdown(t *testing.T) {
	s := start(t, testenv.FreshURL(t, "sqlite"), "GATEHOUSE_JWT_SECRET="+testenv.JWTSecret)
	email, pw := testenv.Email(), "pw-"+testenv.RandomHex(12)
	s.do(t, "POST", "/v1/auth/register", "", map[string]any{"email": email, "password": pw, "name": "Ada"}, 200)
	s.do(t, "POST", "/v1/auth/verify-email", "", map[string]any{"token": s.mailToken(t, email, s.base+"/verify-email?token=")}, 200)
	at := s.do(t, "POST", "/v1/auth/login", "", map[string]any{"email": email, "password": pw}, 200).Str("access_token")
	ot := s.do(t, "POST", "/v1/orgs", at, map[string]any{"name": "Binary MCP"}, 200).Str("access_token")
	tok := mcpToken(t, ot, s.base+"/mcp")

	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest("POST", s.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q\n%s", init.StatusCode, sid, s.tail())
	}
	if r := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != 202 {
		t.Fatalf("initialized: %d", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", s.base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", stream, err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
		}
		stream.Body.Close()
	}()

	s.proc.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		s.exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("gatehouse serve ended with %v after SIGTERM; log:\n%s", err, s.tail())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("gatehouse serve still running 10 s after SIGTERM with an MCP stream open; log:\n%s", s.tail())
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the MCP GET stream did not end with the server")
	}
}

// mcpToken is an access token of like's subject and workspace bound to
// the MCP URL, signed with the binary's GATEHOUSE_JWT_SECRET (the OAuth
// flow to it is internal/mcp's and test/node's).
func mcpToken(t *testing.T, like, mcpURL string) string {
	t.Helper()
	c := testenv.Claims(t, like)
	iss, _ := c["iss"].(string)
	sub, _ := c["sub"].(string)
	org, role, tools := testenv.TokenOrg(t, like)
	sec, err := keys.NewSecret([]byte(testenv.JWTSecret))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := token.Issue(context.Background(), sec, iss, token.Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: jwt.ClaimStrings{"gatehouse", mcpURL}},
		Via: "oauth", Org: token.OrgClaim{ID: org, Role: role, Tools: tools}, SessionID: testenv.SID(t, like)}, sub, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
