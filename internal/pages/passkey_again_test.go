package pages_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPasskeyAddSignInAgain: the "Add a passkey" form with a sign-in too
// old answers with signing in again (the script's begin says why, by
// code); with a recent one it goes back to the page; a cross-site post
// is refused.
func TestPasskeyAddSignInAgain(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		wantRedirect(t, "recent", b.Post(t, "/account/passkeys/add", url.Values{"name": {"Desk key"}}), "/account/passkeys")
		wantPage(t, "cross-site", b.PostCrossSite(t, "/account/passkeys/add", url.Values{"name": {"Desk key"}}), 403, "Request refused")
		env.Clock.Advance(identity.ReauthWindow + 1)
		if st, out := postJSON(t, b, env, "/account/passkeys/begin", "same-origin", nil); st != http.StatusForbidden || out["code"] != "reauth_required" {
			t.Fatalf("begin with an old sign-in: %d %v; want 403 reauth_required", st, out)
		}
		wantPage(t, "old sign-in", b.Post(t, "/account/passkeys/add", url.Values{"name": {"Desk key"}}), 403, "Sign in again", "to add a passkey", `name="password"`)
		if res := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account/passkeys"}}); res.Status != http.StatusSeeOther {
			t.Fatalf("sign in again: %d", res.Status)
		}
		wantPage(t, "back", b.Get(t, "/account/passkeys"), 200, "Add the passkey you named", `action="/account/passkeys/add"`, `name="name" value="Desk key"`)
	})
}
