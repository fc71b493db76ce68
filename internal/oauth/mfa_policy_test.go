package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestRequireMFAGrants: a workspace requiring two-factor holds against
// OAuth (issue 23 item 3). A grant approved by a password-only (aal1)
// session before the requirement was switched on records aal1: after it,
// its access token is refused at the tool APIs and org routes (403, on
// this instance and another), its refresh token and an unspent code are
// refused at the token endpoint (invalid_grant); a new approval of that
// workspace, by consent or by device code, is refused to the aal1
// session and issues nothing. A grant approved at aal2 carries aal2.
func TestRequireMFAGrants(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		other := env.Another(t)
		a := env.Register(t)
		team := env.TeamOrg(t, "Strict Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"client_name": "Test CLI", "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", "refresh_token", deviceGrant}})
		cfg := oauthConfig(env, clientID)
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		approve := func() (code, verifier string) {
			verifier = oauth2.GenerateVerifier()
			u := consentAt(t, b, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), team)
			if u.Query().Get("code") == "" {
				t.Fatalf("approval before the requirement: %s; want a code", u)
			}
			return u.Query().Get("code"), verifier
		}
		code, verifier := approve()
		tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if c := testenv.Claims(t, tok.AccessToken); c["aal"] != "aal1" {
			t.Fatalf("token of an aal1 grant: aal %v; want aal1", c["aal"])
		}
		for _, in := range []*testenv.Env{env, other} {
			in.Call(t, "GET", "/tasks/v1/issues", tok.AccessToken, nil).Want(t, 200) // standing cached
		}
		unspent, unspentVerifier := approve()

		env.Exec(t, `UPDATE orgs SET require_mfa = TRUE WHERE id = $1`, team)
		env.Clock.Advance(3 * time.Second) // past the standing cache: this test is about the grants

		policy := testenv.ErrorNames("requires two-factor")
		for _, in := range []*testenv.Env{env, other} {
			in.RunCases(t, []testenv.Case{
				{Name: "tool API", Method: "GET", Path: "/tasks/v1/issues", Token: tok.AccessToken, Want: 403, Check: policy},
				{Name: "org route", Method: "GET", Path: "/v1/orgs/" + team, Token: tok.AccessToken, Want: 403, Check: policy},
				{Name: "settings", Method: "PATCH", Path: "/v1/orgs/" + team, Token: tok.AccessToken, Body: map[string]any{"require_mfa": false}, Want: 403, Check: policy},
			})
		}
		refresh := tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}})
		wantOAuthError(t, refresh, 400, "invalid_grant")
		if !strings.Contains(refresh.Str("error_description"), "requires two-factor") {
			t.Errorf("refresh refused with %q; want the workspace's policy named", refresh.Str("error_description"))
		}
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {unspent}, "code_verifier": {unspentVerifier},
			"client_id": {clientID}, "redirect_uri": {redirect}}), 400, "invalid_grant")

		// A new approval by the aal1 session: the consent answers the
		// policy and no code leaves.
		page := b.Get(t, cfg.AuthCodeURL("st-2", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		form := hiddenFields(page.Body)
		form.Set("decision", "approve")
		form.Set("org_id", team)
		if p := b.Post(t, "/oauth/authorize", form); p.Status == http.StatusSeeOther || !strings.Contains(p.Body, "requires two-factor") {
			t.Errorf("aal1 approval of a workspace requiring two-factor: %d %q %s; want the consent page naming the policy", p.Status, p.Location(), p.Body)
		}
		// The device flow likewise.
		da, err := cfg.DeviceAuth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p := decideDevice(t, b, da.VerificationURIComplete, "approve", team); strings.Contains(p.Body, "Device connected") || !strings.Contains(p.Body, "requires two-factor") {
			t.Fatalf("aal1 device approval: %d %s; want refused naming the policy", p.Status, p.Body)
		}
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {deviceGrant}, "device_code": {da.DeviceCode}, "client_id": {clientID}}), 400, "authorization_pending")
	})
}
