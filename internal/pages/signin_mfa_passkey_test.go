package pages_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInStepPasskey: a passkey sign-in without user verification of an
// account with TOTP owes the factor: the page's script is sent to the step
// page, with the pending cookie and no session. There "Use a passkey" (a
// verified assertion by the account's other passkey: the one signed in
// with is refused) takes the step and starts the browser session.
func TestSignInStepPasskey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		auth := passkeytest.New("http://web.test", "web.test")
		c := pageAddPasskey(t, env, m.Access, auth)
		c2 := pageAddPasskey(t, env, m.Access, auth)

		b := env.NewBrowser(t)
		step := pagePasskeyFirst(t, env, b, auth, c)
		wantRedirect(t, "GET /account owing the step", b.Get(t, "/account"), "/signin?next=%2Faccount")
		wantPage(t, "step page offers the passkey", b.Get(t, step), 200, `id="passkey-step"`, `src="/assets/passkey.js"`)

		auth.Flags = passkeytest.FlagUP | passkeytest.FlagUV
		so := pageStepBegin(t, env, b)
		if status, _ := postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": so.CeremonyID, "credential": auth.Assert(c, so.Challenge()), "next": "/account"}); status != 401 {
			t.Fatalf("the passkey signed in with as the step: %d; want 401", status)
		}
		so = pageStepBegin(t, env, b)
		status, out := postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": so.CeremonyID, "credential": auth.Assert(c2, so.Challenge()), "next": "/account"})
		if status != 200 || out["next"] != "/account" {
			t.Fatalf("passkey step: %d %v; want next /account", status, out)
		}
		wantPage(t, "account after the passkey step", b.Get(t, "/account"), 200, m.Email)
		// The ceremony is spent.
		if status, _ = postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": so.CeremonyID, "credential": auth.Assert(c2, so.Challenge()), "next": "/"}); status != 401 {
			t.Fatalf("spent pending sign-in: %d; want 401", status)
		}
	})
}

// TestSignInStepPasskeyNotTwice: two factors are two credentials (issue 23
// item 5). After a page sign-in by the account's only passkey without user
// verification, the step page does not offer a passkey, its begin is
// refused (400), that passkey answering a ceremony begun for the account
// elsewhere is refused (401), and the TOTP code takes the step.
func TestSignInStepPasskeyNotTwice(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		auth := passkeytest.New("http://web.test", "web.test")
		c := pageAddPasskey(t, env, m.Access, auth)

		b := env.NewBrowser(t)
		step := pagePasskeyFirst(t, env, b, auth, c)
		if res := b.Get(t, step); res.Status != 200 || strings.Contains(res.Body, "passkey-step") || !strings.Contains(res.Body, `autocomplete="one-time-code"`) {
			t.Fatalf("step page after the passkey: %d; want the code form and no passkey option\n%.2000s", res.Status, res.Body)
		}
		if status, out := postJSON(t, b, env, "/signin/mfa/passkey/begin", "same-origin", nil); status != 400 {
			t.Fatalf("step begin with the only passkey spent: %d %v; want 400", status, out)
		}
		// A password sign-in's step lists the passkey in its ceremony.
		pending := env.Login(t, m.Email, m.Password).Want(t, 200).Str("access_token")
		o := begin(t, env, "/v1/auth/mfa/passkey", pending)
		auth.Flags = passkeytest.FlagUP | passkeytest.FlagUV
		if status, _ := postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": o.CeremonyID, "credential": auth.Assert(c, o.Challenge()), "next": "/account"}); status != 401 {
			t.Fatalf("the passkey signed in with as the step: %d; want 401", status)
		}
		wantRedirect(t, "GET /account owing the step", b.Get(t, "/account"), "/signin?next=%2Faccount")
		res := b.Post(t, "/signin/mfa", url.Values{"method": {"totp"}, "code": {totpNow(t, env, m.Secret)}, "next": {"/account"}})
		wantRedirect(t, "TOTP step", res, "/account")
		wantPage(t, "account after the TOTP step", b.Get(t, "/account"), 200, m.Email)
	})
}

// pageAddPasskey registers a new passkey of auth with the aal2 token
// access and returns its credential.
func pageAddPasskey(t *testing.T, env *testenv.Env, access string, auth *passkeytest.Authenticator) *passkeytest.Credential {
	t.Helper()
	o := begin(t, env, "/v1/me/passkeys/begin", access)
	c, att, err := auth.Create(o)
	if err != nil {
		t.Fatal(err)
	}
	env.Call(t, "POST", "/v1/me/passkeys/finish", access, map[string]any{"ceremony_id": o.CeremonyID, "credential": att}).Want(t, 201)
	return c
}

// pagePasskeyFirst signs b in on /signin with c without user verification
// (one factor) and checks that it is sent to the step page, whose path it
// returns.
func pagePasskeyFirst(t *testing.T, env *testenv.Env, b *testenv.Browser, auth *passkeytest.Authenticator, c *passkeytest.Credential) string {
	t.Helper()
	auth.Flags = passkeytest.FlagUP
	o := begin(t, env, "/v1/auth/passkey/begin", "")
	status, out := postJSON(t, b, env, "/signin/passkey", "same-origin", map[string]any{"ceremony_id": o.CeremonyID, "credential": auth.Assert(c, o.Challenge()), "next": "/account"})
	step := "/signin/mfa?" + url.Values{"next": {"/account"}}.Encode()
	if status != 200 || out["next"] != step || cookieOf(t, env, b, "/", "gatehouse_session") != "" || cookieOf(t, env, b, "/signin/mfa", "gatehouse_mfa") == "" {
		t.Fatalf("unverified passkey sign-in: %d %v; want the step page and only the pending cookie", status, out)
	}
	return step
}

// pageStepBegin begins the step page's passkey option.
func pageStepBegin(t *testing.T, env *testenv.Env, b *testenv.Browser) *passkeytest.Options {
	t.Helper()
	status, out := postJSON(t, b, env, "/signin/mfa/passkey/begin", "same-origin", nil)
	if status != 200 {
		t.Fatalf("step begin: %d %v", status, out)
	}
	raw, _ := json.Marshal(out)
	var so passkeytest.Options
	if err := json.Unmarshal(raw, &so); err != nil || so.CeremonyID == "" {
		t.Fatalf("step begin answered %s (%v)", raw, err)
	}
	return &so
}

// begin calls an API begin endpoint and decodes its options.
func begin(t *testing.T, env *testenv.Env, path, bearer string) *passkeytest.Options {
	t.Helper()
	var o passkeytest.Options
	if err := json.Unmarshal(env.Call(t, "POST", path, bearer, nil).Want(t, 200).Body, &o); err != nil || o.CeremonyID == "" {
		t.Fatalf("begin %s: %v", path, err)
	}
	return &o
}
