package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestNodeMCP runs test/node/mcp.test.js (the MCP TypeScript SDK's client)
// against a Gatehouse started here: a team workspace with a team, whose
// owner the node side signs in as. Skipped without node or npm ci, except
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
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "mcp.test.js")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GATEHOUSE_URL="+env.URL, "TEST_EMAIL="+owner.Email, "TEST_PASSWORD="+owner.Password,
			"ORG_ID="+org, "TEAM_ID="+team, "OWNER_TOKEN="+owner.Token)
		out, err := cmd.CombinedOutput()
		t.Logf("node --test:\n%s", out)
		if err != nil {
			t.Fatalf("node --test: %v", err)
		}
	})
}
