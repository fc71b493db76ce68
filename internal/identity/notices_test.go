package identity_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wantNotice waits for the mail queue and checks that a's address got one
// security notice saying what, with the way back if it was not them.
func wantNotice(t *testing.T, env *testenv.Env, a *testenv.Account, what string) {
	t.Helper()
	env.WaitMail(t)
	texts := env.MailTexts(a.Email, what)
	if len(texts) != 1 {
		t.Fatalf("%d notices to %s saying %q; want 1", len(texts), a.Email, what)
	}
	if !strings.Contains(texts[0], "If it was not you") || !strings.Contains(texts[0], "/recover") ||
		!strings.Contains(texts[0], "http://web.test"+identity.ActivityPath) {
		t.Errorf("notice %q lacks what to do if it was not them, or the activity page", texts[0])
	}
}

// TestSecurityNotices (issue 30 item 6, mail): a password change, a
// personal key made, a passkey added and removed, an authenticator app
// added and removed, new recovery codes and a recovery code used (with
// the number left) each mail the account's address one notice, which
// points to the activity page and holds no secret.
func TestSecurityNotices(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		key := env.Call(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "laptop"}).Want(t, 200).Str("api_key.secret")
		wantNotice(t, env, a, "A personal API key named “laptop” was made")

		auth := passkeytest.New(webOrigin, webRPID)
		_, pk := addPasskey(t, env, a, auth)
		wantNotice(t, env, a, identity.NoticePasskeyAdded)
		env.Call(t, "DELETE", "/v1/me/passkeys/"+pk, a.Access, nil).Want(t, 200)
		wantNotice(t, env, a, identity.NoticePasskeyGone)

		m := enrolTOTP(t, env, a)
		wantNotice(t, env, a, identity.NoticeFactorAdded)
		env.Call(t, "POST", "/v1/me/recovery-codes", m.Access, nil).Want(t, 200)
		wantNotice(t, env, a, identity.NoticeNewCodes)

		pending := pendingLogin(t, env, m)
		r := env.Call(t, "POST", "/v1/me/recovery-codes", m.Access, nil).Want(t, 200)
		codes := testenv.Strings(r.Get("recovery_codes"))
		env.Call(t, "POST", "/v1/auth/mfa", pending.Str("access_token"), step("recovery_code", codes[0])).Want(t, 200)
		wantNotice(t, env, a, "A recovery code of your account was used. You have 9 left.")

		env.Call(t, "DELETE", "/v1/me/factors/"+m.FactorID, m.Access, nil).Want(t, 200)
		wantNotice(t, env, a, identity.NoticeFactorRemoved)

		env.Call(t, "POST", "/v1/me/password", m.Access, map[string]string{"current_password": a.Password, "new_password": a.Password + "-2"}).Want(t, 200)
		wantNotice(t, env, a, identity.NoticePassword)

		// Nine changes, nine notices, and no secret in any: not the key, the
		// app's secret, a recovery code, a password or a token.
		env.WaitMail(t)
		notices := env.MailTexts(a.Email, "If it was not you")
		if len(notices) != 9 {
			t.Errorf("%d notices; want 9 (one a change)", len(notices))
		}
		secrets := map[string]string{"key": key, "app secret": m.Secret, "password": a.Password, "new password": a.Password + "-2",
			"access token": m.Access, "refresh token": pending.Str("refresh_token")}
		for i, c := range codes {
			secrets[fmt.Sprint("recovery code ", i)] = c
		}
		for _, text := range notices {
			for name, secret := range secrets {
				if secret != "" && strings.Contains(text, secret) {
					t.Errorf("a notice holds the %s:\n%s", name, text)
				}
			}
		}
	})
}
