package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// withFactor sets up a TOTP factor for a through the API.
func withFactor(t *testing.T, env *testenv.Env, a *testenv.Account) {
	t.Helper()
	e := env.Call(t, "POST", "/v1/me/factors/totp", a.Access, nil).Want(t, 201)
	code, err := totp.GenerateCodeCustom(e.Str("secret"), env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", a.Access, map[string]string{"code": code}).Want(t, 200)
}

// TestConsentNeedsSecondFactor: the hosted sign-in of an account with a
// factor opens no browser session (the pages do not take the second step
// yet), and a session owing the factor, put in the cookie by hand, is not
// signed in: the authorization request shows no consent and issues no code.
func TestConsentNeedsSecondFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		withFactor(t, env, a)
		clientID := registerClient(t, env, map[string]any{"client_name": "Test CLI", "redirect_uris": []string{redirect}})
		authURL := oauthConfig(env, clientID).AuthCodeURL("st-1", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		b := env.NewBrowser(t)
		p := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/signin"}})
		if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "two-factor") {
			t.Fatalf("sign-in status = %d; want 403 naming two-factor: %s", p.Status, p.Body)
		}
		if page := b.Get(t, authURL); strings.Contains(page.Body, `name="org_id"`) {
			t.Fatalf("consent shown after a sign-in owing its factor: %s", page.Body)
		}
		pending := env.Login(t, a.Email, a.Password).Want(t, 200).Str("refresh_token")
		u, _ := url.Parse(env.URL)
		b.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_session", Value: pending, Path: "/"}})
		if page := b.Get(t, authURL); strings.Contains(page.Body, `name="org_id"`) {
			t.Fatalf("consent shown to a browser session owing its factor: %s", page.Body)
		}
		// Control: a session past the factor in the same cookie is signed in.
		plain := env.Register(t)
		b2 := env.NewBrowser(t)
		b2.Client.Jar.SetCookies(u, []*http.Cookie{{Name: "gatehouse_session", Value: plain.Refresh, Path: "/"}})
		if page := b2.Get(t, authURL); !strings.Contains(page.Body, `name="org_id"`) {
			t.Fatalf("control: consent not shown to a signed-in browser: status %d", page.Status)
		}
	})
}
