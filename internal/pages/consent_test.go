package pages_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestConsentSaysWhatIsGranted: the consent page marks a self-registered
// application as not verified with its redirect host, lists the scopes,
// the resource, how long access lasts and each workspace's tools (a tool
// switched off is not listed); the device page shows the user code to
// compare with the device (RFC 8628 §3.3.1), and approving or denying
// ends on a signed-in page that offers sign-out and a way on.
func TestConsentSaysWhatIsGranted(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		org := env.TeamOrg(t, "Quarry", [2]string{a.UserID, "owner"})
		b := signedIn(t, env, a)
		wantRedirect(t, "tasks off", b.Post(t, "/workspaces/"+org+"/tools", url.Values{"tool": {"tasks"}, "enabled": {"false"}}), "/workspaces/"+org+"/tools?done=tool")

		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Pager", "redirect_uris": []string{"http://127.0.0.1:9/cb"},
			"grant_types": []string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"}}).
			Want(t, http.StatusCreated).Str("client_id")
		authorize := "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "state": {"s"},
			"scope": {"openid profile"}, "resource": {env.URL}}.Encode()
		res := b.Get(t, authorize)
		wantPage(t, "consent", res, 200, "Not verified", "It registered itself", "trust <strong>127.0.0.1:9</strong>",
			"<code>openid</code>, <code>profile</code>", "the resource <code>"+env.URL+"</code>", "30 days without use")
		quarry := res.Body[strings.Index(res.Body, "Quarry"):]
		quarry = quarry[:strings.Index(quarry, "</label>")]
		if !strings.Contains(quarry, "notes") || strings.Contains(quarry, "tasks") {
			t.Fatalf("the workspace's tools on the consent page: %q; want notes and not tasks (off)", quarry)
		}
		// A workspace requiring two-factor sign-in that this session lacks:
		// the page still answers, listing no tools for it.
		strict := env.TeamOrg(t, "Strict", [2]string{a.UserID, "member"})
		env.Exec(t, `UPDATE orgs SET require_mfa = TRUE WHERE id = $1`, strict)
		wantPage(t, "require_mfa", b.Get(t, authorize), 200, "Needs a two-factor sign-in")
		if strings.Contains(res.Body, "Check that your device shows") {
			t.Fatalf("a browser consent asks for a device code")
		}

		r, err := env.Client.PostForm(env.URL+"/oauth/device/authorization", url.Values{"client_id": {client}, "scope": {"offline_access"}})
		if err != nil {
			t.Fatal(err)
		}
		var da struct {
			UserCode string `json:"user_code"`
		}
		if err := json.NewDecoder(r.Body).Decode(&da); err != nil || r.StatusCode != 200 {
			t.Fatalf("device authorization: %d %v", r.StatusCode, err)
		}
		r.Body.Close()
		wantPage(t, "device consent", b.Get(t, "/device?user_code="+strings.ToLower(strings.ReplaceAll(da.UserCode, "-", ""))), 200,
			"Check that your device shows this code", `user-code">`+da.UserCode+"<", "Not verified", "<code>offline_access</code>")

		// Either outcome is a signed-in page with sign-out and a way on.
		decide := func(decision string) *testenv.Page {
			return b.Post(t, "/device", url.Values{"user_code": {da.UserCode}, "org_id": {org}, "decision": {decision}})
		}
		wantPage(t, "device approved", decide("approve"), 200, "Device connected", `action="/signout"`, `href="/account/apps">See your connected apps`)
		r, err = env.Client.PostForm(env.URL+"/oauth/device/authorization", url.Values{"client_id": {client}})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewDecoder(r.Body).Decode(&da); err != nil || r.StatusCode != 200 {
			t.Fatalf("device authorization: %d %v", r.StatusCode, err)
		}
		r.Body.Close()
		wantPage(t, "device denied", decide("deny"), 200, "Request denied", `action="/signout"`, `href="/">Go to your console`)
	})
}
