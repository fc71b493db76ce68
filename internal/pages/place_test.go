package pages_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestWorkspaceSwitcher: every console page's header lists the person's
// own workspaces (the personal one marked), never another's, and names
// the workspace of a workspace page; opening one leaves the default as
// it was.
func TestWorkspaceSwitcher(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Switcher Team", [2]string{a.UserID, "owner"})
		env.TeamOrg(t, "Someone Else's Team", [2]string{env.Register(t).UserID, "owner"})
		b := signedIn(t, env, a)
		home := b.Get(t, "/account/sessions")
		wantPage(t, "account page", home, 200, `<details class="switcher">`, "Your workspaces", `href="/workspaces/`+team+`">Switcher Team</a>`,
			`href="/workspaces/`+a.OrgID+`">Test User</a> <span class="place-tag">personal</span> <span class="place-tag default">default</span>`)
		if strings.Contains(home.Body, "Someone Else") {
			t.Fatalf("the switcher lists another person's workspace")
		}
		wantPage(t, "workspace page", b.Get(t, "/workspaces/"+team+"/members"), 200, "Workspace: <strong>Switcher Team</strong>",
			`href="/workspaces/`+team+`" aria-current="true">`)
		if me := env.Do(t, "GET", "/v1/auth/me", env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token"), nil).Want(t, 200); me.Get("org.id") != a.OrgID {
			t.Fatalf("after opening a workspace sign-in starts in %v; want the personal one still", me.Get("org.id"))
		}
		if strings.Contains(env.NewBrowser(t).Get(t, "/signin").Body, "switcher") {
			t.Fatalf("a signed-out page has a switcher")
		}
	})
}
