package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// withFactor sets up a TOTP factor for a through the API and returns its
// secret; the clock moves a step on, so the confirming code is spent.
func withFactor(t *testing.T, env *testenv.Env, a *testenv.Account) string {
	t.Helper()
	e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
	code, err := totp.GenerateCodeCustom(e.Str("secret"), env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", a.Access, map[string]string{"code": code}).Want(t, 200)
	env.Clock.Advance(30 * time.Second)
	return e.Str("secret")
}

// TestConsentNeedsSecondFactor: the hosted sign-in of an account with a
// factor opens no browser session until the step page has its code: before
// it the authorization request shows no consent and issues no code (nor
// does the pending sign-in put in the session cookie by hand); after it
// the browser lands back on the consent page and the code flow completes.
func TestConsentNeedsSecondFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		secret := withFactor(t, env, a)
		team := env.TeamOrg(t, "Acme Team", [2]string{a.UserID, "admin"})
		clientID := registerClient(t, env, map[string]any{"client_name": "Test CLI", "redirect_uris": []string{redirect}})
		cfg := oauthConfig(env, clientID)
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier))
		b := env.NewBrowser(t)
		first := b.Get(t, authURL)
		loc, _ := url.Parse(first.Location())
		next := loc.Query().Get("next")
		if first.Status != http.StatusSeeOther || loc.Path != "/signin" || !strings.HasPrefix(next, "/oauth/authorize?") {
			t.Fatalf("anonymous authorize: %d %q; want 303 to /signin with next", first.Status, first.Location())
		}
		p := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}})
		step := "/signin/mfa?" + url.Values{"next": {next}}.Encode()
		if p.Status != http.StatusSeeOther || p.Location() != step {
			t.Fatalf("sign-in: %d %q; want 303 to %s", p.Status, p.Location(), step)
		}
		if page := b.Get(t, authURL); strings.Contains(page.Body, `name="org_id"`) || strings.Contains(page.Location(), "code=") {
			t.Fatalf("consent or code before the second step: %d %q %s", page.Status, page.Location(), page.Body)
		}
		pending := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		u, _ := url.Parse(env.URL)
		forged := env.NewBrowser(t)
		forged.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_session", Value: pending, Path: "/"}})
		if page := forged.Get(t, authURL); strings.Contains(page.Body, `name="org_id"`) || strings.Contains(page.Location(), "code=") {
			t.Fatalf("consent shown to a browser session owing its factor: %s", page.Body)
		}
		code, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		if p := b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {code}, "next": {next}}); p.Status != http.StatusSeeOther || p.Location() != next {
			t.Fatalf("step: %d %q; want 303 back to %s", p.Status, p.Location(), next)
		}
		back := consentAt(t, b, env.URL+next, team)
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
		tok, err := cfg.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if c := testenv.Claims(t, tok.AccessToken); c["sub"] != a.UserID {
			t.Fatalf("claims = %v; want the user's token", c)
		}
	})
}

// TestDeviceAfterSecondStep: the device page sends an anonymous browser
// to sign in; an account with TOTP goes through the step page and lands
// back on the device page, which approves the device only then.
func TestDeviceAfterSecondStep(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		secret := withFactor(t, env, a)
		clientID := registerClient(t, env, map[string]any{"client_name": "gh-cli", "grant_types": []string{deviceGrant}})
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
		da, err := oauthConfig(env, clientID).DeviceAuth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := env.NewBrowser(t)
		loc, _ := url.Parse(b.Get(t, da.VerificationURIComplete).Location())
		next := loc.Query().Get("next")
		if !strings.HasPrefix(next, "/device?user_code=") {
			t.Fatalf("anonymous device page: next = %q; want the device page", next)
		}
		p := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}})
		if !strings.HasPrefix(p.Location(), "/signin/mfa?") {
			t.Fatalf("sign-in: %d %q; want the step page", p.Status, p.Location())
		}
		if page := b.Get(t, next); strings.Contains(page.Body, `name="org_id"`) {
			t.Fatalf("device consent before the second step: %s", page.Body)
		}
		code, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		if p := b.Post(t, "/signin/mfa", url.Values{"code": {code}, "next": {next}}); p.Location() != next {
			t.Fatalf("step: %d %q; want back to %s", p.Status, p.Location(), next)
		}
		if p := decideDevice(t, b, next, "approve", a.OrgID); p.Status != 200 || !strings.Contains(p.Body, "Device connected") {
			t.Fatalf("approve: %d %s", p.Status, p.Body)
		}
	})
}
