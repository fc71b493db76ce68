package sso_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// totpAt is secret's code at the env's clock.
func totpAt(t *testing.T, env *testenv.Env, secret string) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// TestSocialSecondFactor: a person whose account has its own second
// factor, signing in through a social provider, is handed to the pages'
// second step (a pending sign-in, as after a password) instead of being
// refused; the step's code then opens the browser session, and before it
// there is none.
func TestSocialSecondFactor(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.VerifyEmail(t, a)
		claims := map[string]any{"sub": "f-" + testenv.RandomHex(3), "email": a.Email, "email_verified": true}
		resp, _ := socialIn(t, env, idp, "acme", claims)
		link, _ := body(t, resp)["link_token"].(string)
		tok := env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
		env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 200)
		e := env.Call(t, "POST", "/v1/me/factors/totp", tok, nil).Want(t, 201)
		secret := e.Str("secret")
		env.Call(t, "POST", "/v1/me/factors/"+e.Str("factor.id")+"/confirm", tok, map[string]string{"code": totpAt(t, env, secret)}).Want(t, 200)
		env.Clock.Advance(30 * time.Second)

		resp, b := socialIn(t, env, idp, "acme", claims)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin/mfa?next=%2Fconsole" {
			t.Fatalf("callback answered %d to %q %v; want 303 to the second step", resp.StatusCode, resp.Header.Get("Location"), body(t, resp))
		}
		if b.cookies["gatehouse_mfa"] == "" || sessionUser(t, env, b) != "" {
			t.Fatalf("cookies %v; want the pending cookie and no browser session", b.cookies)
		}
		if text := page(t, env, b, "/signin/mfa?next=%2Fconsole"); !strings.Contains(text, "Two-step verification") {
			t.Fatalf("the step page does not ask for the second step:\n%s", text)
		}
		resp, _ = b.post(t, env.URL+"/signin/mfa", url.Values{"code": {totpAt(t, env, secret)}, "next": {"/console"}}, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console" || sessionUser(t, env, b) != a.UserID {
			t.Errorf("step answered %d to %q for %q; want 303 to /console for %s", resp.StatusCode, resp.Header.Get("Location"), sessionUser(t, env, b), a.UserID)
		}
	})
}
