package pages_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestKeyFormNoTools: "Only these:" with no tool ticked is refused next
// to the tools, on the personal and the workspace key forms, and makes no
// key (issue 30 item 8).
func TestKeyFormNoTools(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		org := env.TeamOrg(t, "Keyed", [2]string{a.UserID, "owner"})
		for _, path := range []string{"/account/keys", "/workspaces/" + org + "/keys"} {
			res := b.Post(t, path, url.Values{"name": {"nothing"}, "scope": {"some"}, "expires_in_days": {"30"}, "role": {"member"}})
			wantPage(t, path, res, http.StatusBadRequest, `id="tools-error">Tick at least one tool, or choose every tool.`, `value="some" checked`)
			if strings.Contains(b.Get(t, path).Body, ">nothing<") {
				t.Fatalf("%s: a key for no tool was made", path)
			}
		}
		wantRedirect(t, "one tool", b.Post(t, "/account/keys", url.Values{"name": {"tasks only"}, "scope": {"some"}, "tools": {"tasks"}, "expires_in_days": {"30"}}), "/account/keys")
	})
}

// TestOrgRequireTwoFactorSwitch: the settings page's switch turns the
// workspace's two-factor requirement on for an owner signed in with a
// second factor, and off again; an owner without one is told on the page
// to set it up first; a member gets the service's 403 and changes nothing.
func TestOrgRequireTwoFactorSwitch(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		plain, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Strict", [2]string{m.UserID, "owner"}, [2]string{plain.UserID, "owner"}, [2]string{member.UserID, "member"})
		settings := "/workspaces/" + org + "/settings"
		switchPath := settings + "/two-factor"

		pb := signedIn(t, env, plain)
		wantPage(t, "off at first", pb.Get(t, settings), 200, "Not required", "Require two-factor sign-in")
		wantPage(t, "owner without a factor", pb.Post(t, switchPath, url.Values{"require": {"on"}}), http.StatusForbidden,
			`id="require_mfa-error">Set up two-factor authentication for yourself before requiring it of the workspace.`, `href="/account/two-factor"`)
		wantPage(t, "member", signedIn(t, env, member).Post(t, switchPath, url.Values{"require": {"on"}}), http.StatusForbidden)
		if env.Call(t, "GET", "/v1/orgs/"+org, m.Access, nil).Want(t, 200).Get("org.require_mfa") != false {
			t.Fatalf("a refused switch turned the requirement on")
		}

		b := env.NewBrowser(t)
		toStep(t, env, b, m, "/")
		wantRedirect(t, "step", b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, m.Secret)}, "next": {"/"}}), "/")
		wantRedirect(t, "on", b.Post(t, switchPath, url.Values{"require": {"on"}}), settings+"?done=org-mfa-on")
		wantPage(t, "required", b.Get(t, settings+"?done=org-mfa-on"), 200, "Two-factor sign-in is now required", "Stop requiring two-factor sign-in")
		if env.Call(t, "GET", "/v1/orgs/"+org, m.Access, nil).Want(t, 200).Get("org.require_mfa") != true {
			t.Fatalf("the switch did not turn the requirement on")
		}
		wantPage(t, "cross-site", b.PostCrossSite(t, switchPath, url.Values{"require": {"off"}}), http.StatusForbidden)
		wantRedirect(t, "off", b.Post(t, switchPath, url.Values{"require": {"off"}}), settings+"?done=org-mfa-off")
	})
}

// TestPasskeyRenamePage: a passkey is renamed on the passkeys page, which
// shows when it was added and last used; an empty name is refused next to
// its field; another account's passkey is not found.
func TestPasskeyRenamePage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		_, begun := postJSON(t, b, env, "/account/passkeys/begin", "same-origin", nil)
		raw, _ := json.Marshal(begun)
		var o passkeytest.Options
		json.Unmarshal(raw, &o)
		_, att, err := passkeytest.New("http://web.test", "web.test").Create(&o)
		if err != nil {
			t.Fatal(err)
		}
		if st, out := postJSON(t, b, env, "/account/passkeys/finish", "same-origin", map[string]any{"ceremony_id": o.CeremonyID, "credential": att, "name": "Desk key"}); st != 201 {
			t.Fatalf("finish: %d %v", st, out)
		}
		page := b.Get(t, "/account/passkeys")
		wantPage(t, "list", page, 200, "Desk key", "added ", "never used yet", `action="/account/passkeys/rename"`)
		m := sessionIDs.FindStringSubmatch(page.Body)
		if m == nil {
			t.Fatalf("no passkey id on the page")
		}
		wantPage(t, "empty name", b.Post(t, "/account/passkeys/rename", url.Values{"id": {m[1]}, "name": {" "}}), http.StatusBadRequest,
			`id="name-`+m[1]+`-error">Name is required.`)
		wantRedirect(t, "rename", b.Post(t, "/account/passkeys/rename", url.Values{"id": {m[1]}, "name": {"Travel key"}}), "/account/passkeys?done=passkey-renamed")
		wantPage(t, "renamed", b.Get(t, "/account/passkeys?done=passkey-renamed"), 200, "Passkey renamed to “Travel key”.", "<strong>Travel key</strong>")
		other := signedIn(t, env, env.Register(t))
		wantPage(t, "another's passkey", other.Post(t, "/account/passkeys/rename", url.Values{"id": {m[1]}, "name": {"Mine now"}}), http.StatusNotFound)
		wantPage(t, "cross-site", b.PostCrossSite(t, "/account/passkeys/rename", url.Values{"id": {m[1]}, "name": {"x"}}), http.StatusForbidden)
	})
}

// TestHomeDiscoverableWorkspace: a workspace that verified a suggest-mode
// claim on a domain is offered on the home page of a person whose
// confirmed address is at that domain, and joined in one step; a person
// at another domain, or whose address is not confirmed, is offered
// nothing and cannot join by posting.
func TestHomeDiscoverableWorkspace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Domain Works", [2]string{owner.UserID, "owner"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "suggest")

		p := env.RegisterAt(t, domain)
		pb := signedIn(t, env, p)
		if body := pb.Get(t, "/").Body; strings.Contains(body, "Join Domain Works") {
			t.Fatalf("offered before the address is confirmed")
		}
		wantPage(t, "join unconfirmed", pb.Post(t, "/join", nil), http.StatusForbidden)
		env.VerifyEmail(t, p)
		wantPage(t, "offered", pb.Get(t, "/"), 200, "Join Domain Works", domain, `action="/join"`)

		stranger := env.Register(t)
		env.VerifyEmail(t, stranger)
		sb := signedIn(t, env, stranger)
		if body := sb.Get(t, "/").Body; strings.Contains(body, "Domain Works") {
			t.Fatalf("a person at another domain was offered the workspace")
		}
		wantPage(t, "stranger joins", sb.Post(t, "/join", nil), http.StatusNotFound)
		wantPage(t, "cross-site join", pb.PostCrossSite(t, "/join", nil), http.StatusForbidden)

		wantRedirect(t, "join", pb.Post(t, "/join", nil), "/workspaces/"+org+"?done=joined")
		wantPage(t, "joined", pb.Get(t, "/workspaces/"+org+"?done=joined"), 200, "You joined the workspace.")
		if body := pb.Get(t, "/").Body; strings.Contains(body, "Join Domain Works") {
			t.Fatalf("still offered after joining")
		}
	})
}
