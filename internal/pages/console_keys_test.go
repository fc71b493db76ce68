package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var shownSecret = regexp.MustCompile(`<code id="new-secret" class="secret-value">([^<]+)</code>`)

// copyScript is the copy buttons' script tag, loaded only by a page that
// shows a secret once.
const copyScript = `src="/assets/copy.js"`

// TestConsoleKeys: a personal key created on the page is shown once (the
// next view has no secret), works as a bearer token with the tools and
// workspace chosen, and stops working once revoked there; a refused name
// keeps the typed values; another user's key cannot be revoked; a
// cross-site create makes no key.
func TestConsoleKeys(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		team := env.TeamOrg(t, "Key Team", [2]string{a.UserID, "admin"})
		wantPage(t, "GET /account/keys", b.Get(t, "/account/keys"), 200, "You have no personal API keys.", "Key Team", `value="tasks"`)

		res := b.Post(t, "/account/keys", url.Values{"name": {"x"}, "org_id": {team}, "scope": {"some"}, "tools": {"tasks"}, "expires_in_days": {"30"}})
		wantPage(t, "short name", res, 400, `id="key-name-error">Name must be 2 to`, `value="x"`, `id="scope-some" name="scope" value="some" checked`,
			`name="tools" value="tasks" checked`)
		if strings.Contains(res.Body, `<option value="`+team+`" selected>`) == false {
			t.Fatalf("the chosen workspace is not kept:\n%s", res.Body)
		}
		res = b.Post(t, "/account/keys", url.Values{"name": {"backup"}, "org_id": {team}, "scope": {"some"}, "tools": {"tasks", "nope"}, "expires_in_days": {"30"}})
		wantPage(t, "unknown tool", res, 400, `id="tools-error">Unknown tool &#34;nope&#34;`, `name="tools" value="tasks" checked`)
		if strings.Contains(res.Body, `value="notes" checked`) {
			t.Fatalf("a box nobody ticked is ticked")
		}
		forged := b.PostCrossSite(t, "/account/keys", url.Values{"name": {"forged"}, "org_id": {team}, "expires_in_days": {"30"}})
		wantPage(t, "cross-site create", forged, 403, "Request refused")

		res = b.Post(t, "/account/keys", url.Values{"name": {"backup script"}, "org_id": {team}, "scope": {"some"}, "tools": {"tasks"}, "expires_in_days": {"30"}})
		wantRedirect(t, "create", res, "/account/keys")
		page := b.Get(t, "/account/keys")
		wantPage(t, "after create", page, 200, "This is the only time it is shown", `data-copy="new-secret"`, copyScript)
		if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Fatalf("CSP %q does not allow the copy script", csp)
		}
		m := shownSecret.FindStringSubmatch(page.Body)
		if m == nil || !strings.HasPrefix(m[1], "svc_u_") {
			t.Fatalf("no secret shown:\n%s", page.Body)
		}
		secret := m[1]
		again := b.Get(t, "/account/keys")
		wantPage(t, "reload", again, 200, "backup script", "tasks", "expires")
		if strings.Contains(again.Body, secret) || strings.Contains(again.Body, "only time it is shown") {
			t.Fatalf("the secret is shown a second time")
		}
		if strings.Contains(again.Body, copyScript) {
			t.Fatalf("a page without copy button loads the copy script")
		}
		exchange := func(want int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, want)
		}
		if id, _, tools := testenv.TokenOrg(t, exchange(200).Str("access_token")); id != team || strings.Join(tools, ",") != "tasks" {
			t.Fatalf("the key's token is for org %s tools %v; want %s [tasks]", id, tools, team)
		}

		kid := sessionIDs.FindStringSubmatch(again.Body)
		if kid == nil {
			t.Fatalf("no revoke form")
		}
		stranger := signedIn(t, env, env.Register(t))
		wantPage(t, "foreign key", stranger.Post(t, "/account/keys/revoke", url.Values{"confirm": {"yes"}, "id": {kid[1]}}), 404, "Api key not found.")
		exchange(200)
		wantRedirect(t, "revoke", b.Post(t, "/account/keys/revoke", url.Values{"confirm": {"yes"}, "id": {kid[1]}}), "/account/keys?done=key-revoked")
		wantPage(t, "revoked", b.Get(t, "/account/keys?done=key-revoked"), 200, "was revoked: it no longer works.", "You have no personal API keys.")
		exchange(401)
	})
}

// TestConsoleWorkspaces: create (a refused name keeps the typed value),
// make default, and leave; the last owner cannot leave, and the page says
// why.
func TestConsoleWorkspaces(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		wantPage(t, "bad name", b.Post(t, "/account/workspaces", url.Values{"name": {"x"}}), 400, `id="ws-name-error">`, `value="x"`)
		wantRedirect(t, "create", b.Post(t, "/account/workspaces", url.Values{"name": {"Moon Base"}}), "/account/workspaces?done=created")
		res := b.Get(t, "/account/workspaces?done=created")
		// A new workspace leaves the default as it was, unless the person
		// ticks the box; the personal one can be made it again.
		wantPage(t, "listed", res, 200, "Workspace created.", "Moon Base", "Make default: Moon Base")
		wantRedirect(t, "create as default", b.Post(t, "/account/workspaces", url.Values{"name": {"Star Base"}, "as_default": {"yes"}}), "/account/workspaces?done=created")
		res = b.Get(t, "/account/workspaces?done=created")
		wantPage(t, "listed as default", res, 200, "Make default: Test User", "Make default: Moon Base")
		id := regexp.MustCompile(`name="org_id" value="([0-9a-f-]{36})">\s*<button type="submit" class="secondary small" aria-label="Leave Moon Base`).FindStringSubmatch(res.Body)
		if id == nil {
			t.Fatalf("no leave form for Moon Base:\n%s", res.Body)
		}
		wantRedirect(t, "default", b.Post(t, "/account/workspaces/default", url.Values{"org_id": {a.OrgID}}), "/account/workspaces?done=default")
		if me := env.Do(t, "GET", "/v1/auth/me", env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token"), nil).Want(t, 200); me.Get("org.id") != a.OrgID {
			t.Fatalf("sign-in starts in %v; want the personal workspace %s again", me.Get("org.id"), a.OrgID)
		}
		wantPage(t, "last owner leaves", b.Post(t, "/account/workspaces/leave", url.Values{"confirm": {"yes"}, "org_id": {id[1]}}), 409, `class="error" role="alert"`)
		wantPage(t, "not a member", b.Post(t, "/account/workspaces/default", url.Values{"org_id": {env.TeamOrg(t, "Other")}}), 403, "Not a member")

		m := env.Register(t)
		joined := env.TeamOrg(t, "Joined Team", [2]string{env.Register(t).UserID, "owner"}, [2]string{m.UserID, "member"})
		mb := signedIn(t, env, m)
		wantRedirect(t, "leave", mb.Post(t, "/account/workspaces/leave", url.Values{"confirm": {"yes"}, "org_id": {joined}}), "/account/workspaces?done=left")
		if strings.Contains(mb.Get(t, "/account/workspaces").Body, "Joined Team") {
			t.Fatalf("still listed after leaving")
		}
	})
}

// TestConsoleDelete: the address must be typed (the typed value kept); a
// sole owner of a workspace with members gets the service's 409 explained
// with a link to the workspaces; otherwise the account goes and the
// browser is signed out.
func TestConsoleDelete(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		wantPage(t, "GET", b.Get(t, "/account/delete"), 200, "This cannot be undone")
		wantPage(t, "mistyped", b.Post(t, "/account/delete", url.Values{"confirm": {"someone@else"}}), 400, `id="confirm-error"`, `value="someone@else"`)
		team := env.TeamOrg(t, "Owned Team", [2]string{a.UserID, "owner"}, [2]string{env.Register(t).UserID, "member"})
		res := b.Post(t, "/account/delete", url.Values{"confirm": {strings.ToUpper(a.Email)}})
		wantPage(t, "sole owner", res, 409, "cannot be deleted yet", "Owned Team", `href="/account/workspaces"`)
		env.Login(t, a.Email, a.Password).Want(t, 200)
		forged := b.PostCrossSite(t, "/account/delete", url.Values{"confirm": {a.Email}})
		wantPage(t, "cross-site delete", forged, 403, "Request refused")

		env.Exec(t, `DELETE FROM memberships WHERE org_id = $1 AND user_id <> $2`, team, a.UserID)
		wantRedirect(t, "delete", b.Post(t, "/account/delete", url.Values{"confirm": {a.Email}}), "/signin?done=deleted")
		wantPage(t, "after", b.Get(t, "/signin?done=deleted"), 200, "Your account was deleted.")
		env.Login(t, a.Email, a.Password).Want(t, 401)
	})
}

// TestConsoleApps: the empty state, and a grant id that is not the
// caller's (or not an id) is not found.
func TestConsoleApps(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := signedIn(t, env, env.Register(t))
		wantPage(t, "GET /account/apps", b.Get(t, "/account/apps"), 200, "No applications are connected to your account.")
		for _, id := range []string{"not-an-id", "01a20d82-b85c-75ef-b2fc-77c7b8e1b128"} {
			wantPage(t, "disconnect "+id, b.Post(t, "/account/apps/disconnect", url.Values{"id": {id}}), 404, "Grant not found.")
		}
	})
}
