package app

import "testing"

// TestMCPURLOf checks GATEHOUSE_MCP_URL's default and the URLs refused
// because a tool API's token would reach the MCP server or the other way
// round.
func TestMCPURLOf(t *testing.T) {
	for _, c := range []struct {
		base, api, mcp, want string
	}{
		{"https://id.example", "", "", "https://id.example/mcp"},
		{"https://id.example", "https://api.example", "", "https://api.example/mcp"},
		{"https://id.example", "https://api.example", "https://mcp.example/", "https://mcp.example"},
		{"https://id.example", "https://api.example", "https://api.example/tasks/mcp", ""},
		{"https://id.example", "https://api.example", "https://api.example", ""},
		{"https://id.example", "https://api.example", "https://id.example", ""},
	} {
		got, err := mcpURLOf(Config{BaseURL: c.base, APIURL: c.api, MCPURL: c.mcp})
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("mcpURLOf(%s, %s, %s) = %q, %v; want %q", c.base, c.api, c.mcp, got, err, c.want)
		}
	}
}
