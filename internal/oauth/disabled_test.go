package oauth_test

import (
	"context"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestDisabledAccountGrants: an operator's `users disable` (the service
// method the CLI calls) between a person's consent and the client's token
// request refuses the exchange: an authorization code consented to before
// it, a device code approved before it, and the refresh token of a grant
// issued before it. Enabled again, the spent codes stay spent and a new
// consent works. A password change, which ends the account's other
// sessions, likewise ends a code another browser session consented to
// (a thief's), not the changer's own.
func TestDisabledAccountGrants(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		a := env.Register(t)
		team := env.TeamOrg(t, "Grants Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"client_name": "Test CLI", "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", deviceGrant, "refresh_token"}})
		cfg := oauthConfig(env, clientID)
		cctx := context.WithValue(ctx, oauth2.HTTPClient, env.Client)
		b := env.NewBrowser(t)
		signIn(t, b, a)

		consent := func() (code, verifier string) {
			verifier = oauth2.GenerateVerifier()
			back := consentAt(t, b, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), team)
			return back.Query().Get("code"), verifier
		}
		exchange := func(code, verifier string) *testenv.Resp {
			return tokenPost(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
				"client_id": {clientID}, "redirect_uri": {redirect}})
		}
		granted, grantedVerifier := consent()
		tok := exchange(granted, grantedVerifier).Want(t, 200)
		code, verifier := consent()

		da, err := cfg.DeviceAuth(cctx)
		if err != nil {
			t.Fatal(err)
		}
		if p := decideDevice(t, b, da.VerificationURIComplete, "approve", team); p.Status != 200 {
			t.Fatalf("approve: %d %s", p.Status, p.Body)
		}

		if _, err := env.Svc.DisableAccount(ctx, a.Email); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, exchange(code, verifier), 400, "invalid_grant")
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {deviceGrant}, "device_code": {da.DeviceCode}, "client_id": {clientID}}), 400, "access_denied")
		wantOAuthError(t, tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Str("refresh_token")}, "client_id": {clientID}}), 400, "invalid_grant")
		env.Do(t, "GET", "/v1/auth/verify", tok.Str("access_token"), nil).Want(t, 401)

		if _, err := env.Svc.EnableAccount(ctx, a.Email); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, exchange(code, verifier), 400, "invalid_grant")
		signIn(t, b, a)
		code, verifier = consent()
		exchange(code, verifier).Want(t, 200)

		thief := env.NewBrowser(t)
		signIn(t, thief, a)
		thiefVerifier := oauth2.GenerateVerifier()
		stolen := consentAt(t, thief, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(thiefVerifier)), team).Query().Get("code")
		own, ownVerifier := consent()
		if p := b.Post(t, "/account/password", url.Values{"current_password": {a.Password}, "new_password": {"a new passphrase"}}); p.Status != 303 {
			t.Fatalf("password change: %d %s", p.Status, p.Body)
		}
		wantOAuthError(t, exchange(stolen, thiefVerifier), 400, "invalid_grant")
		exchange(own, ownVerifier).Want(t, 200)
	})
}
