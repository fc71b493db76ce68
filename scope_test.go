package gatehouse

import "testing"

// TestResourceTool: a resource names the tool of its first segment under
// the API base, the base itself every tool, anything else none.
func TestResourceTool(t *testing.T) {
	const api = "https://api.example.com"
	for res, want := range map[string]string{
		api:                               AllTools,
		api + "/":                         AllTools,
		api + "/tasks":                    "tasks",
		api + "/tasks/":                   "tasks",
		api + "/tasks/v1/issues":          "tasks",
		api + "/tasksx":                   "tasksx",
		api + "/tasks?x=1":                "",
		"https://api.example.com.evil.io": "",
		"https://evil.io/tasks":           "",
		"https://api.example.comtasks":    "",
	} {
		if got := ResourceTool(res, api+"/"); got != want {
			t.Errorf("ResourceTool(%q) = %q; want %q", res, got, want)
		}
	}
}

// TestScopeAllows: no tool scope allows everything; with one, only the
// scope an operation needs (write does not imply read).
func TestScopeAllows(t *testing.T) {
	for _, c := range []struct {
		scope, tool string
		access      Access
		want        bool
	}{
		{"", "tasks", Write, true},
		{"openid profile offline_access", "sign", Write, true},
		{"tasks:read", "tasks", Read, true},
		{"tasks:read", "tasks", Write, false},
		{"tasks:write", "tasks", Read, false},
		{"tasks:read tasks:write", "tasks", Write, true},
		{"tasks:read", "forms", Read, false},
		{"tasks:read", "notes", Read, false},
	} {
		if got := ScopeAllows(c.scope, c.tool, c.access); got != c.want {
			t.Errorf("ScopeAllows(%q, %s, %s) = %v; want %v", c.scope, c.tool, c.access, got, c.want)
		}
	}
	for _, w := range ScopesSupported() {
		if ScopeSays(w) == "" {
			t.Errorf("scope %s says nothing", w)
		}
	}
}
