package web

import (
	"testing"

	"github.com/gatehouse/gatehouse"
)

// TestAudienceReach: with the accounts service and the tool APIs on
// different URLs, a token bound to the accounts service reaches only the
// accounts API, one bound to the API base every tool but not the accounts
// API, one bound to a tool (or a URL under it) that tool alone; an unbound
// token reaches everything.
func TestAudienceReach(t *testing.T) {
	s := NewServer(Config{Issuer: "https://id.example/", APIURL: "https://api.example"})
	for _, c := range []struct {
		resources []string
		accounts  bool
		tools     map[string]bool
	}{
		{nil, true, map[string]bool{"tasks": true, "forms": true}},
		{[]string{"https://id.example"}, true, map[string]bool{"tasks": false, "forms": false}},
		{[]string{"https://api.example/"}, false, map[string]bool{"tasks": true, "forms": true}},
		{[]string{"https://api.example/tasks"}, false, map[string]bool{"tasks": true, "forms": false}},
		{[]string{"https://api.example/tasks/v1/issues"}, false, map[string]bool{"tasks": true, "forms": false}},
		{[]string{"https://api.example/tasks", "https://id.example/"}, true, map[string]bool{"tasks": true, "forms": false}},
		{[]string{"https://id.example/tasks"}, false, map[string]bool{"tasks": false}},
	} {
		p := &gatehouse.Principal{Resources: c.resources}
		if got := s.reachesAccounts(p); got != c.accounts {
			t.Errorf("%v reaches the accounts API: %v; want %v", c.resources, got, c.accounts)
		}
		for tool, want := range c.tools {
			if got := s.reachesTool(p, tool); got != want {
				t.Errorf("%v reaches %s: %v; want %v", c.resources, tool, got, want)
			}
		}
	}
}
