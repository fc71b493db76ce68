package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
)

// mcpWorld is the state the MCP targets share: a team workspace with a
// team and a few issues, the member's workspace token (the Tasks API), a
// token bound to the MCP URL (a device-flow grant), and one MCP session
// per worker.
type mcpWorld struct {
	base     string
	orgToken string
	mcpToken string
	sessions []string
	call     []byte
	// stateless is call as revision 2026-07-28 sends it (no session).
	stateless []byte
}

// mcpIssues is how many issues the listed team holds.
const mcpIssues = 10

// tasksIssuesTarget measures "GET /tasks/v1/issues", the API call the
// MCP target's tool makes, for the paired run.
func tasksIssuesTarget() target {
	return newTarget("tasks_issues",
		func(ctx context.Context, e *env) (*mcpWorld, error) { return mcpSetup(ctx, e, false) },
		func(_ int, s *mcpWorld) (*http.Request, error) {
			req, err := http.NewRequest(http.MethodGet, s.base+"/tasks/v1/issues", nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+s.orgToken)
			return req, nil
		}, nil)
}

// mcpCallTarget measures "tools/call" of tasks_list_issues over Streamable
// HTTP, each worker in its own session (issue 26: 32 sessions).
func mcpCallTarget() target {
	return newTarget("mcp_tasks_list_issues",
		func(ctx context.Context, e *env) (*mcpWorld, error) { return mcpSetup(ctx, e, true) },
		func(w int, s *mcpWorld) (*http.Request, error) {
			req, err := s.post(s.call)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Mcp-Session-Id", s.sessions[w%len(s.sessions)])
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			return req, nil
		}, nil)
}

// mcpStatelessTarget measures the same tools/call of revision
// 2026-07-28: no session, its revision in the headers and _meta (what the
// Go SDK's client sends by default), answered by Gatehouse's fast path.
func mcpStatelessTarget() target {
	return newTarget("mcp_stateless_tasks_list_issues",
		func(ctx context.Context, e *env) (*mcpWorld, error) { return mcpSetup(ctx, e, true) },
		func(_ int, s *mcpWorld) (*http.Request, error) {
			req, err := s.post(s.stateless)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "tasks_list_issues")
			return req, nil
		}, nil)
}

// post is a JSON-RPC POST to the MCP URL with the bound token.
func (s *mcpWorld) post(body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.mcpToken)
	return req, nil
}

// mcpSetup builds the workspace, its team and issues; with sessions, also
// the bound token (device flow, approved on the hosted page) and one
// initialized session per worker.
func mcpSetup(ctx context.Context, e *env, sessions bool) (*mcpWorld, error) {
	var org struct {
		AccessToken string `json:"access_token"`
		Org         struct {
			ID string `json:"id"`
		} `json:"org"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs", e.user.session.AccessToken, map[string]string{"name": "Bench MCP"}, &org); err != nil {
		return nil, err
	}
	var team struct {
		Team struct {
			ID string `json:"id"`
		} `json:"team"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org.Org.ID+"/teams", org.AccessToken, map[string]string{"name": "Bench"}, &team); err != nil {
		return nil, err
	}
	for i := range mcpIssues {
		if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/tasks/v1/issues", org.AccessToken,
			map[string]any{"teamId": team.Team.ID, "title": fmt.Sprintf("Issue %d", i)}, nil); err != nil {
			return nil, err
		}
	}
	s := &mcpWorld{base: e.baseURL, orgToken: org.AccessToken,
		call: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tasks_list_issues","arguments":{"teamId":"` + team.Team.ID + `"}}}`),
		stateless: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tasks_list_issues","arguments":{"teamId":"` + team.Team.ID +
			`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)}
	if !sessions {
		return s, nil
	}
	// The token is bound to the MCP URL the server names (its base URL's
	// host, which need not be the address the bench dials).
	var prm struct {
		Resource string `json:"resource"`
	}
	if err := callJSON(ctx, e.client, http.MethodGet, e.baseURL+"/.well-known/oauth-protected-resource/mcp", nil, &prm); err != nil {
		return nil, err
	}
	tok, err := deviceGrant(ctx, e, org.Org.ID, prm.Resource)
	if err != nil {
		return nil, err
	}
	s.mcpToken = tok
	n := max(e.workers, 1)
	s.sessions = make([]string, n)
	for i := range n {
		if s.sessions[i], err = s.initialize(ctx, e.client); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// initialize starts one MCP session and returns its id.
func (s *mcpWorld) initialize(ctx context.Context, client *http.Client) (string, error) {
	req, err := s.post([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return "", skipf("POST /mcp: %d (not in this binary)", resp.StatusCode)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", fmt.Errorf("initialize: %d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	req, err = s.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err = client.Do(req.WithContext(ctx))
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %d", resp.StatusCode)
	}
	return id, nil
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// deviceGrant gets an access token bound to resource for the bench user
// in orgID: a public client registered for the device flow, its code
// approved on the hosted device page by a signed-in browser.
func deviceGrant(ctx context.Context, e *env, orgID, resource string) (string, error) {
	const grant = "urn:ietf:params:oauth:grant-type:device_code"
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := callJSON(ctx, e.client, http.MethodPost, e.baseURL+"/oauth/register",
		map[string]any{"client_name": "bench", "grant_types": []string{grant}}, &client); err != nil {
		return "", err
	}
	var da struct {
		DeviceCode string `json:"device_code"`
		Complete   string `json:"verification_uri_complete"`
	}
	if err := postForm(ctx, e.client, e.baseURL+"/oauth/device/authorization",
		url.Values{"client_id": {client.ClientID}, "resource": {resource}}, &da); err != nil {
		return "", err
	}
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Transport: e.client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The hosted pages answer on the web URL's origin, which the
	// verification URI names.
	complete, err := url.Parse(da.Complete)
	if err != nil {
		return "", err
	}
	web := complete.Scheme + "://" + complete.Host
	if _, err := browse(ctx, b, http.MethodPost, web+"/signin",
		url.Values{"email": {e.user.email}, "password": {e.user.password}, "next": {"/"}}); err != nil {
		return "", err
	}
	body, err := browse(ctx, b, http.MethodGet, da.Complete, nil)
	if err != nil {
		return "", err
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	form.Set("decision", "approve")
	form.Set("org_id", orgID)
	if _, err := browse(ctx, b, http.MethodPost, web+"/device", form); err != nil {
		return "", err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := postForm(ctx, e.client, e.baseURL+"/oauth/token",
		url.Values{"grant_type": {grant}, "device_code": {da.DeviceCode}, "client_id": {client.ClientID}}, &tok); err != nil {
		return "", err
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("device grant: no access token")
	}
	return tok.AccessToken, nil
}

// browse sends a browser request and returns the body; any status below
// 400 is fine (the sign-in and the decision redirect).
func browse(ctx context.Context, c *http.Client, method, u string, form url.Values) (string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("%s %s: %d", method, u, resp.StatusCode)
	}
	return string(b), nil
}

// postForm sends one form-encoded setup request and decodes its JSON answer.
func postForm(ctx context.Context, client *http.Client, u string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}
