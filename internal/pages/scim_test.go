package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// scimTokenCount counts the live SCIM tokens of org.
func scimTokenCount(t *testing.T, env *testenv.Env, org string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM scim_tokens WHERE org_id = $1 AND deleted_at IS NULL`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConsoleSCIM is the provisioning page: owner and admin see the base
// URL, create a token (shown once, to that browser) and delete it; billing
// and member get 403 for the page and forged posts; a cross-site post is
// refused; a bad name is explained next to its field.
func TestConsoleSCIM(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, member := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Directory", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/scim"
		ob, ab, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, member)

		wantPage(t, "owner", ob.Get(t, path), 200, "This workspace has no SCIM tokens.", "/scim/v2</code>", `form method="post" action="`+path+`"`)
		if !strings.Contains(ob.Get(t, "/workspaces/"+org).Body, `href="`+path+`"`) {
			t.Errorf("the owner is not offered the provisioning page")
		}
		wantPage(t, "bad name", ab.Post(t, path, url.Values{"name": {" "}}), 400, `id="token-name-error"`)
		wantRedirect(t, "create", ab.Post(t, path, url.Values{"name": {"Okta"}}), path)
		res := ab.Get(t, path)
		secret := regexp.MustCompile(`id="new-secret" class="secret-value">(scim_[^<]+)<`).FindStringSubmatch(res.Body)
		if secret == nil {
			t.Fatalf("the new token is not shown:\n%.3000s", res.Body)
		}
		if strings.Contains(ab.Get(t, path).Body, secret[1]) || strings.Contains(ob.Get(t, path).Body, secret[1]) {
			t.Fatalf("the token is shown a second time")
		}
		env.Do(t, "POST", "/scim/v2/Users", secret[1], map[string]any{"userName": "dir-" + testenv.RandomHex(4) + "@elsewhere.test"}).Want(t, 201)
		wantPage(t, "audit", ob.Get(t, "/workspaces/"+org+"/audit?action=identity.scim.user_created"), 200, `"item-title">Directory user created<`, "by SCIM token “")
		id := regexp.MustCompile(`name="token_id" value="([^"]+)"`).FindStringSubmatch(res.Body)[1]

		wantPage(t, "member page", mb.Get(t, path), 403)
		wantPage(t, "member creates", mb.Post(t, path, url.Values{"name": {"mine"}}), 403)
		wantPage(t, "member deletes", mb.Post(t, path+"/delete", url.Values{"token_id": {id}}), 403)
		wantPage(t, "cross-site delete", ob.PostCrossSite(t, path+"/delete", url.Values{"token_id": {id}}), 403)
		if n := scimTokenCount(t, env, org); n != 1 {
			t.Fatalf("after refused changes the workspace has %d tokens; want 1", n)
		}
		// A post that skips the confirmation step shows it and deletes nothing.
		wantPage(t, "delete unconfirmed", ob.Post(t, path+"/delete", url.Values{"token_id": {id}}), 200, "Delete the SCIM token ", `name="confirm" value="yes"`)
		if n := scimTokenCount(t, env, org); n != 1 {
			t.Fatalf("after an unconfirmed delete the workspace has %d tokens; want 1", n)
		}
		wantRedirect(t, "delete", ob.Post(t, path+"/delete", url.Values{"token_id": {id}, "confirm": {"yes"}}), path+"?done=scim-token-deleted")
		wantPage(t, "deleted", ob.Get(t, path+"?done=scim-token-deleted"), 200, "SCIM token deleted.", "This workspace has no SCIM tokens.")
		env.Do(t, "GET", "/scim/v2/Users", secret[1], nil).Want(t, 401)
	})
}

// TestConsoleSCIMProvisionRole is the provisioning role form: an admin
// saves a role, which the page then shows chosen; owner is refused next to
// the field; member posts and cross-site posts change nothing.
func TestConsoleSCIMProvisionRole(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, member := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Directory", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/scim"
		ob, ab, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, member)
		role := func() string {
			return env.Call(t, "GET", "/v1/orgs/"+org+"/scim-settings", owner.Access, nil).Want(t, 200).Str("scim_settings.provision_role")
		}

		wantPage(t, "owner", ob.Get(t, path), 200, `action="`+path+`/settings"`, `<option value="member" selected>`, `<option value="admin">`)
		if strings.Contains(ob.Get(t, path).Body, `<option value="owner"`) {
			t.Errorf("owner is offered as a provisioning role")
		}
		wantPage(t, "owner refused", ob.Post(t, path+"/settings", url.Values{"provision_role": {"owner"}}), 400, `id="provision-role-error"`)
		wantPage(t, "member", mb.Post(t, path+"/settings", url.Values{"provision_role": {"admin"}}), 403)
		wantPage(t, "cross-site", ob.PostCrossSite(t, path+"/settings", url.Values{"provision_role": {"admin"}}), 403)
		if r := role(); r != "member" {
			t.Fatalf("after refused posts the role is %q; want member", r)
		}
		wantRedirect(t, "save", ab.Post(t, path+"/settings", url.Values{"provision_role": {"admin"}}), path+"?done=scim-settings")
		wantPage(t, "saved", ab.Get(t, path+"?done=scim-settings"), 200, "Provisioning role saved", `<option value="admin" selected>`)
		if r := role(); r != "admin" {
			t.Errorf("role %q; want admin", r)
		}
	})
}

// TestConsoleAuditByActor: the audit page's actor select offers every SCIM
// token and each live one, and shows only their entries when chosen; an
// actor that names no one is explained next to the select.
func TestConsoleAuditByActor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Directory", [2]string{owner.UserID, "owner"})
		r := env.Call(t, "POST", "/v1/orgs/"+org+"/scim-tokens", owner.Access, map[string]string{"name": "Okta prod"}).Want(t, 200)
		secret, id := r.Str("scim_token.token"), r.Str("scim_token.id")
		env.Do(t, "POST", "/scim/v2/Users", secret, map[string]any{"userName": "dir-" + testenv.RandomHex(4) + "@elsewhere.test"}).Want(t, 201)
		ob := signedIn(t, env, owner)
		path := "/workspaces/" + org + "/audit"

		wantPage(t, "audit", ob.Get(t, path), 200, `<select id="actor" name="actor">`, `<option value="scim">`, `<option value="scim:`+id+`">SCIM token Okta prod</option>`,
			`"item-title">SCIM token created<`)
		p := ob.Get(t, path+"?actor=scim:"+id)
		wantPage(t, "one token", p, 200, `<option value="scim:`+id+`" selected>`, `"item-title">Directory user created<`, "by SCIM token “Okta prod”")
		if strings.Contains(p.Body, `"item-title">SCIM token created<`) {
			t.Errorf("the token's filter shows the owner's entries")
		}
		wantPage(t, "bad actor", ob.Get(t, path+"?actor=nobody"), 400, `id="actor-error"`)
	})
}
