package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var userCodeRE = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// decideDevice answers a device code on the hosted page in browser b.
func decideDevice(t testing.TB, b *testenv.Browser, pageURL, decision, orgID string) *testenv.Page {
	t.Helper()
	p := b.Get(t, pageURL)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `name="org_id"`) {
		t.Fatalf("device page status = %d, body %s; want the device consent page", p.Status, p.Body)
	}
	form := hiddenFields(p.Body)
	form.Set("decision", decision)
	form.Set("org_id", orgID)
	return b.Post(t, "/device", form)
}

// TestDeviceFlowXOAuth2 runs RFC 8628 through golang.org/x/oauth2's
// DeviceAuth and DeviceAccessToken (which polls honouring interval).
func TestDeviceFlowXOAuth2(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		team := env.TeamOrg(t, "Device Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"client_name": "gh-cli", "grant_types": []string{deviceGrant, "refresh_token"}})
		cfg := oauthConfig(env, clientID)
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), oauth2.HTTPClient, env.Client), 20*time.Second)
		defer cancel()
		da, err := cfg.DeviceAuth(ctx, oauth2.SetAuthURLParam("resource", env.URL))
		if err != nil {
			t.Fatal(err)
		}
		if !userCodeRE.MatchString(da.UserCode) || da.VerificationURI != env.URL+"/device" || da.Interval != 1 ||
			da.VerificationURIComplete != env.URL+"/device?user_code="+da.UserCode || time.Until(da.Expiry) < 9*time.Minute {
			t.Fatalf("device authorization = %+v", da)
		}
		b := env.NewBrowser(t)
		if p := b.Get(t, da.VerificationURIComplete); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/signin?") {
			t.Fatalf("anonymous device page: %d %q; want sign-in first", p.Status, p.Location())
		}
		signIn(t, b, a)
		if p := decideDevice(t, b, da.VerificationURIComplete, "approve", team); p.Status != 200 || !strings.Contains(p.Body, "Device connected") {
			t.Fatalf("approve: %d %s", p.Status, p.Body)
		}
		tok, err := cfg.DeviceAccessToken(ctx, da)
		if err != nil {
			t.Fatal(err)
		}
		c := testenv.Claims(t, tok.AccessToken)
		if c["via"] != "oauth" || c["org"].(map[string]any)["id"] != team || tok.RefreshToken == "" {
			t.Fatalf("device token claims = %v, refresh %q", c, tok.RefreshToken)
		}
		// The device code is spent.
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {deviceGrant}, "device_code": {da.DeviceCode}, "client_id": {clientID}}), 400, "invalid_grant")
		// And its refresh token works for the same client.
		tok.Expiry = time.Now().Add(-time.Minute)
		if _, err := cfg.TokenSource(ctx, tok).Token(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDeviceFlowErrors drives the polling answers of RFC 8628 §3.5 with
// the injected clock.
func TestDeviceFlowErrors(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"grant_types": []string{deviceGrant}})
		start := func() (device, user string) {
			r := postForm(t, env, "/oauth/device/authorization", url.Values{"client_id": {clientID}}).Want(t, 200)
			return r.Str("device_code"), r.Str("user_code")
		}
		poll := func(device string) *testenv.Resp {
			return tokenPost(t, env, url.Values{"grant_type": {deviceGrant}, "device_code": {device}, "client_id": {clientID}})
		}
		b := env.NewBrowser(t)
		signIn(t, b, a)

		device, user := start()
		wantOAuthError(t, poll(device), 400, "authorization_pending")
		wantOAuthError(t, poll(device), 400, "slow_down")
		env.Clock.Advance(7 * time.Second) // 1 s interval, grown by 5 s
		wantOAuthError(t, poll(device), 400, "authorization_pending")
		// Typed loosely: lowercase, with spaces.
		loose := strings.ToLower(strings.ReplaceAll(user, "-", " "))
		if p := decideDevice(t, b, "/device?user_code="+url.QueryEscape(loose), "deny", a.OrgID); p.Status != 200 || !strings.Contains(p.Body, "denied") {
			t.Fatalf("deny: %d %s", p.Status, p.Body)
		}
		env.Clock.Advance(time.Minute)
		wantOAuthError(t, poll(device), 400, "access_denied")
		// An answered code is no longer offered on the page.
		if p := b.Get(t, "/device?user_code="+user); p.Status != 404 {
			t.Fatalf("answered code page: %d", p.Status)
		}

		device, _ = start()
		env.Clock.Advance(11 * time.Minute)
		wantOAuthError(t, poll(device), 400, "expired_token")
		wantOAuthError(t, poll("not-a-device-code"), 400, "invalid_grant")

		if p := b.Get(t, "/device?user_code=BBBB-BBBB"); p.Status != 404 || !strings.Contains(p.Body, "not valid") {
			t.Fatalf("unknown code page: %d %s", p.Status, p.Body)
		}
		if p := b.Get(t, "/device"); p.Status != 200 || !strings.Contains(p.Body, `name="user_code"`) {
			t.Fatalf("entry page: %d", p.Status)
		}

		codeOnly := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		wantOAuthError(t, postForm(t, env, "/oauth/device/authorization", url.Values{"client_id": {codeOnly}}), 400, "unauthorized_client")
	})
}
