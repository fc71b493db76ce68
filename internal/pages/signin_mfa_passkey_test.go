package pages_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignInStepPasskey: a passkey sign-in without user verification of an
// account with TOTP owes the factor: the page's script is sent to the step
// page, with the pending cookie and no session. There "Use a passkey" (a
// verified assertion) takes the step and starts the browser session.
func TestSignInStepPasskey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		auth := passkeytest.New("http://web.test", "web.test")
		o := begin(t, env, "/v1/me/passkeys/begin", m.Access)
		c, att, err := auth.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		env.Call(t, "POST", "/v1/me/passkeys/finish", m.Access, map[string]any{"ceremony_id": o.CeremonyID, "credential": att}).Want(t, 201)

		b := env.NewBrowser(t)
		auth.Flags = passkeytest.FlagUP // no user verification: one factor
		o = begin(t, env, "/v1/auth/passkey/begin", "")
		status, out := postJSON(t, b, env, "/signin/passkey", "same-origin", map[string]any{"ceremony_id": o.CeremonyID, "credential": auth.Assert(c, o.Challenge()), "next": "/account"})
		step := "/signin/mfa?" + url.Values{"next": {"/account"}}.Encode()
		if status != 200 || out["next"] != step || cookieOf(t, env, b, "/", "gatehouse_session") != "" || cookieOf(t, env, b, "/signin/mfa", "gatehouse_mfa") == "" {
			t.Fatalf("unverified passkey sign-in: %d %v; want the step page and only the pending cookie", status, out)
		}
		wantRedirect(t, "GET /account owing the step", b.Get(t, "/account"), "/signin?next=%2Faccount")
		wantPage(t, "step page offers the passkey", b.Get(t, step), 200, `id="passkey-step"`, `src="/assets/passkey.js"`)

		auth.Flags = passkeytest.FlagUP | passkeytest.FlagUV
		status, out = postJSON(t, b, env, "/signin/mfa/passkey/begin", "same-origin", nil)
		if status != 200 {
			t.Fatalf("step begin: %d %v", status, out)
		}
		raw, _ := json.Marshal(out)
		var so passkeytest.Options
		json.Unmarshal(raw, &so)
		status, out = postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": so.CeremonyID, "credential": auth.Assert(c, so.Challenge()), "next": "/account"})
		if status != 200 || out["next"] != "/account" {
			t.Fatalf("passkey step: %d %v; want next /account", status, out)
		}
		wantPage(t, "account after the passkey step", b.Get(t, "/account"), 200, m.Email)
		// The ceremony is spent.
		if status, _ = postJSON(t, b, env, "/signin/mfa/passkey", "same-origin", map[string]any{"ceremony_id": so.CeremonyID, "credential": auth.Assert(c, so.Challenge()), "next": "/"}); status != 401 {
			t.Fatalf("spent pending sign-in: %d; want 401", status)
		}
	})
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
