package mcp_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// BenchmarkMCPCall is one tools/call of tasks_list_teams over Streamable
// HTTP in an open session, on SQLite: what a session's own server (built
// once, at initialize) must not make slower.
func BenchmarkMCPCall(b *testing.B) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	a, org := env.Team(b)
	env.CreateTeam(b, a.Token, org, "Platform")
	cs := connect(b, env, bound(b, env, a.Token, "", nil, env.URL+"/mcp"))
	for b.Loop() {
		if res := call(b, cs, "tasks_list_teams", nil); res.IsError {
			b.Fatal(text(res))
		}
	}
}
