package mcp_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// nodeRedirect is where test/node/mcp.test.js's client is sent back to.
const nodeRedirect = "http://127.0.0.1:43111/callback"

// TestNodeMCP runs test/node/mcp.test.js (the MCP TypeScript SDK's client)
// against a Gatehouse started here: a team workspace with a team, whose
// owner the node side signs in as. The client registers by client ID
// metadata document: its document is served here over TLS, at an https
// URL whose certificate Gatehouse trusts as GATEHOUSE_WEBHOOK_CA_FILE
// makes it (loopback allowed). Skipped without node or npm ci, except
// under CI=true.
func TestNodeMCP(t *testing.T) {
	node, err := exec.LookPath("node")
	testenv.NeedTool(t, err == nil, "node")
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"))
	testenv.NeedTool(t, err == nil, "test/node/node_modules (npm ci)")
	var fetches atomic.Int32
	var doc *httptest.Server
	doc = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp-client.json" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": doc.URL + r.URL.Path, "client_name": "MCP TypeScript SDK client",
			"redirect_uris": []string{nodeRedirect}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
			// Both scopes, so the step-up may ask for the write one.
			"scope": "tasks:read tasks:write",
		})
	}))
	t.Cleanup(doc.Close)
	roots := x509.NewCertPool()
	roots.AddCert(doc.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: roots, AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		fetches.Store(0)
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "mcp.test.js")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GATEHOUSE_URL="+env.URL, "TEST_EMAIL="+owner.Email, "TEST_PASSWORD="+owner.Password,
			"ORG_ID="+org, "TEAM_ID="+team, "OWNER_TOKEN="+owner.Token, "CLIENT_ID="+doc.URL+"/mcp-client.json",
			"REDIRECT_URI="+nodeRedirect)
		out, err := cmd.CombinedOutput()
		t.Logf("node --test:\n%s", out)
		if err != nil {
			t.Fatalf("node --test: %v", err)
		}
		if fetches.Load() == 0 {
			t.Fatal("Gatehouse never fetched the client's metadata document")
		}
	})
}
