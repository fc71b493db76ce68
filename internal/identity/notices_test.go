package identity_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
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
	if !strings.Contains(texts[0], "If it was not you") || !strings.Contains(texts[0], "/recover") {
		t.Errorf("notice %q lacks what to do if it was not them", texts[0])
	}
}

// TestSecurityNotices (issue 30 item 6, mail): a password change, a
// personal key made, an authenticator app added and removed, new recovery
// codes and a recovery code used (with the number left) each mail the
// account's address.
func TestSecurityNotices(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.Call(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "laptop"}).Want(t, 200)
		wantNotice(t, env, a, "A personal API key named “laptop” was made")

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
	})
}
