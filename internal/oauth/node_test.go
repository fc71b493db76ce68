package oauth_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestNodeClients runs test/node (oauth4webapi and the MCP TypeScript SDK)
// with node --test against a Gatehouse started here, with a user it
// registers; the node side signs in and consents on the hosted pages.
func TestNodeClients(t *testing.T) {
	node, err := exec.LookPath("node")
	testenv.NeedTool(t, err == nil, "node")
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", "oauth4webapi"))
	testenv.NeedTool(t, err == nil, "test/node/node_modules (npm ci)")
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "oauth.test.js")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GATEHOUSE_URL="+env.URL, "TEST_EMAIL="+a.Email, "TEST_PASSWORD="+a.Password)
		out, err := cmd.CombinedOutput()
		t.Logf("node --test:\n%s", out)
		if err != nil {
			t.Fatalf("node --test: %v", err)
		}
	})
}
