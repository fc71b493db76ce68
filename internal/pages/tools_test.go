package pages_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// TestConsoleTools: an admin switches a tool off and on; a member sees no
// switch and a forged post answers 403 and changes nothing; a missing
// value is a 400, not a change.
func TestConsoleTools(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		admin, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Toolshed", [2]string{env.Register(t).UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/tools"
		ab, mb := signedIn(t, env, admin), signedIn(t, env, member)
		res := ab.Get(t, path)
		wantPage(t, "admin", res, 200, `aria-label="Turn off tasks"`, `aria-label="Turn off crm"`)
		if n := strings.Count(res.Body, `aria-label="Turn off `); n != len(workspace.Tools) || n != 7 {
			t.Fatalf("%d tool switches; want the seven tools", n)
		}
		res = mb.Get(t, path)
		wantPage(t, "member", res, 200, "tasks", "Your role does not let you switch tools")
		if strings.Contains(res.Body, `action="/workspaces/`) {
			t.Fatalf("a member sees tool switches")
		}
		wantPage(t, "member switches", mb.Post(t, path, url.Values{"tool": {"tasks"}, "enabled": {"false"}}), 403)
		wantPage(t, "no value", ab.Post(t, path, url.Values{"tool": {"tasks"}}), 400)
		wantPage(t, "unknown tool", ab.Post(t, path, url.Values{"tool": {"nope"}, "enabled": {"false"}}), 400)
		wantPage(t, "unchanged", ab.Get(t, path), 200, `aria-label="Turn off tasks"`)

		wantRedirect(t, "off", ab.Post(t, path, url.Values{"tool": {"tasks"}, "enabled": {"false"}}), path+"?done=tool")
		wantPage(t, "is off", ab.Get(t, path), 200, `aria-label="Turn on tasks"`, `aria-label="Turn off notes"`)
		wantRedirect(t, "on", ab.Post(t, path, url.Values{"tool": {"tasks"}, "enabled": {"true"}}), path+"?done=tool")
		wantPage(t, "is on", ab.Get(t, path), 200, `aria-label="Turn off tasks"`)
	})
}
