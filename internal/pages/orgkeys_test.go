package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// orgKeyCount counts the usable (unrevoked) keys of org.
func orgKeyCount(t *testing.T, env *testenv.Env, org string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE org_id = $1 AND kind = 'org' AND revoked_at IS NULL`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConsoleOrgKeys is the workspace keys page's permission table: owner
// and admin create (secret shown once) and revoke; billing and member get
// the service's 403 for the page and for forged posts, and nothing changes;
// bad input is explained next to its field with the typed name kept.
func TestConsoleOrgKeys(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, billing, member := env.Register(t), env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Keyring", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"},
			[2]string{billing.UserID, "billing"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/keys"
		ob, ab, bb, mb := signedIn(t, env, owner), signedIn(t, env, admin), signedIn(t, env, billing), signedIn(t, env, member)

		wantPage(t, "owner", ob.Get(t, path), 200, "This workspace has no API keys.", `form method="post" action="`+path+`"`)
		wantPage(t, "bad name", ab.Post(t, path, url.Values{"name": {" "}, "role": {"admin"}, "expires_in_days": {"30"}, "scope": {"all"}}), 400,
			`id="key-name-error"`)
		wantPage(t, "owner role", ab.Post(t, path, url.Values{"name": {"deploy"}, "role": {"owner"}, "expires_in_days": {"30"}}), 400,
			`id="role-error"`, `value="deploy"`)
		wantPage(t, "bad expiry", ab.Post(t, path, url.Values{"name": {"deploy"}, "role": {"member"}, "expires_in_days": {"99999"},
			"scope": {"some"}, "tools": {"notes"}}), 400, `id="expiry-error"`, `name="tools" value="notes" checked`, `value="some" checked`)
		if n := orgKeyCount(t, env, org); n != 0 {
			t.Fatalf("refused forms made %d keys", n)
		}
		wantRedirect(t, "create", ab.Post(t, path, url.Values{"name": {"deploy"}, "role": {"member"}, "expires_in_days": {"30"},
			"scope": {"some"}, "tools": {"tasks", "notes"}}), path)
		res := ab.Get(t, path)
		secret := regexp.MustCompile(`id="new-secret" class="secret-value">(svc_o_[^<]+)<`).FindStringSubmatch(res.Body)
		if secret == nil {
			t.Fatalf("the new key's secret is not shown:\n%.3000s", res.Body)
		}
		wantPage(t, "listed", res, 200, "deploy", "member · tasks, notes · expires")
		if again := ab.Get(t, path); strings.Contains(again.Body, secret[1]) {
			t.Fatalf("the secret is shown a second time")
		}
		if strings.Contains(ob.Get(t, path).Body, secret[1]) {
			t.Fatalf("another browser sees the secret")
		}
		id := regexp.MustCompile(`name="key_id" value="([^"]+)"`).FindStringSubmatch(res.Body)[1]

		for name, b := range map[string]*testenv.Browser{"billing": bb, "member": mb} {
			wantPage(t, name+" page", b.Get(t, path), 403)
			wantPage(t, name+" creates", b.Post(t, path, url.Values{"name": {"mine"}, "role": {"admin"}, "expires_in_days": {"0"}}), 403)
			wantPage(t, name+" revokes", b.Post(t, path+"/revoke", url.Values{"key_id": {id}}), 403)
			if strings.Contains(b.Get(t, "/workspaces/"+org).Body, `href="`+path+`"`) {
				t.Fatalf("%s is offered the keys page", name)
			}
		}
		wantPage(t, "cross-site revoke", ob.PostCrossSite(t, path+"/revoke", url.Values{"key_id": {id}}), 403)
		if n := orgKeyCount(t, env, org); n != 1 {
			t.Fatalf("after refused changes the workspace has %d keys; want 1", n)
		}
		wantRedirect(t, "revoke", ob.Post(t, path+"/revoke", url.Values{"confirm": {"yes"}, "key_id": {id}}), path+"?done=key-revoked")
		wantPage(t, "revoked", ob.Get(t, path), 200, "This workspace has no API keys.")
		if n := orgKeyCount(t, env, org); n != 0 {
			t.Fatalf("after revoking the workspace has %d keys", n)
		}
	})
}
