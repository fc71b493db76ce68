package pages_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// deviceAuth is a device authorization's answer (RFC 8628 §3.2).
type deviceAuth struct {
	DeviceCode string `json:"device_code"`
	UserCode   string `json:"user_code"`
	Complete   string `json:"verification_uri_complete"`
}

// deviceAuthorization starts a device authorization with form.
func deviceAuthorization(t *testing.T, env *testenv.Env, form url.Values) deviceAuth {
	t.Helper()
	var da deviceAuth
	if st := postForm(t, env, "/oauth/device/authorization", form, &da); st != 200 {
		t.Fatalf("device authorization: %d", st)
	}
	return da
}

// postForm posts form to path outside any browser and decodes the JSON
// answer into out (nil: not read); it returns the status.
func postForm(t *testing.T, env *testenv.Env, path string, form url.Values, out any) int {
	t.Helper()
	r, err := env.Client.PostForm(env.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if out != nil && r.StatusCode == 200 {
		if err := json.NewDecoder(r.Body).Decode(out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return r.StatusCode
}

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
			"Confirm who you are <span class=\"muted\">(<code>openid</code>)", "See your name and picture", "Read and change what your role allows",
			"the resource <code>"+env.URL+"</code>", "30 days without use")
		// Tool scopes are named in plain words, and the grant is only that.
		scoped := strings.Replace(authorize, "scope=openid+profile", "scope=tasks%3Aread+forms%3Awrite", 1)
		res2 := b.Get(t, scoped)
		wantPage(t, "tool scopes", res2, 200, "Read your tasks <span", "(<code>tasks:read</code>)",
			"Create and change your forms and where their submissions go", "Only that, in one workspace")
		if strings.Contains(res2.Body, "Read and change what your role allows") || strings.Contains(res2.Body, "tasks:write") {
			t.Fatalf("the consent page of tasks:read forms:write promises more: %s", res2.Body)
		}
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

		da := deviceAuthorization(t, env, url.Values{"client_id": {client}, "scope": {"offline_access sign:read"}})
		wantPage(t, "device consent", b.Get(t, "/device?user_code="+strings.ToLower(strings.ReplaceAll(da.UserCode, "-", ""))), 200,
			"Check that your device shows this code", `user-code">`+da.UserCode+"<", "Not verified", "<code>offline_access</code>",
			"Read your documents for signature", "Only that, in one workspace")

		// Either outcome is a signed-in page with sign-out and a way on.
		decide := func(decision string) *testenv.Page {
			return b.Post(t, "/device", url.Values{"user_code": {da.UserCode}, "org_id": {org}, "decision": {decision}})
		}
		wantPage(t, "device approved", decide("approve"), 200, "Device connected", `action="/signout"`, `href="/account/apps">See your connected apps`)
		da = deviceAuthorization(t, env, url.Values{"client_id": {client}})
		wantPage(t, "device denied", decide("deny"), 200, "Request denied", `action="/signout"`, `href="/">Go to your console`)
	})
}

// TestConsoleAppsDisconnect: an application connected through the device
// page is listed on the connected apps page with its workspace and since
// when; disconnecting it there ends its access (its refresh token is
// refused) and empties the list.
func TestConsoleAppsDisconnect(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		org := env.TeamOrg(t, "Lighthouse", [2]string{a.UserID, "member"})
		b := signedIn(t, env, a)
		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Beacon CLI", "redirect_uris": []string{"http://127.0.0.1:9/cb"},
			"grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code", "refresh_token"}}).Want(t, http.StatusCreated).Str("client_id")
		da := deviceAuthorization(t, env, url.Values{"client_id": {client}, "scope": {"offline_access"}})
		wantPage(t, "approve", b.Post(t, "/device", url.Values{"user_code": {da.UserCode}, "org_id": {org}, "decision": {"approve"}}), 200, "Device connected")
		var tok struct {
			Refresh string `json:"refresh_token"`
		}
		if st := postForm(t, env, "/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {da.DeviceCode},
			"client_id": {client}}, &tok); st != 200 || tok.Refresh == "" {
			t.Fatalf("device token: %d, refresh %q", st, tok.Refresh)
		}
		res := b.Get(t, "/account/apps")
		wantPage(t, "listed", res, 200, "Beacon CLI", "in Lighthouse · since "+env.Clock.Now().Format("2 Jan 2006"), `aria-label="Disconnect Beacon CLI"`)
		id := sessionIDs.FindStringSubmatch(res.Body)
		if id == nil {
			t.Fatalf("no disconnect form:\n%s", res.Body)
		}
		wantRedirect(t, "disconnect", b.Post(t, "/account/apps/disconnect", url.Values{"id": {id[1]}}), "/account/apps?done=disconnected")
		wantPage(t, "after", b.Get(t, "/account/apps?done=disconnected"), 200, "Application disconnected.", "No applications are connected")
		if st := postForm(t, env, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {client}}, nil); st != 400 {
			t.Fatalf("refresh after disconnecting: %d; want 400", st)
		}
	})
}
