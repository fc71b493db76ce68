package sso_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// accessOf is an access token of the browser session b holds, which
// keeps the rotated refresh token.
func accessOf(t *testing.T, env *testenv.Env, b *browser) string {
	t.Helper()
	r := env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": b.cookies["gatehouse_session"]}).Want(t, 200)
	b.cookies["gatehouse_session"] = r.Str("refresh_token")
	return r.Str("access_token")
}

// identities lists the identities the bearer of tok has.
func identities(t *testing.T, env *testenv.Env, tok string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, v := range env.Call(t, "GET", "/v1/me/identities", tok, nil).Want(t, 200).Get("identities").([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestIdentities: a person lists their linked identities and unlinks
// one, never another account's (404) and never the last way to sign in
// of an account with no password and no passkey (409); unlinked, the
// subject no longer signs in to the account.
func TestIdentities(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		email := "i-" + testenv.RandomHex(3) + "@example.com"
		claims := map[string]any{"sub": "i-" + testenv.RandomHex(3), "email": email, "email_verified": true}
		resp, b := socialIn(t, env, idp, "acme", claims)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-up answered %d %v", resp.StatusCode, body(t, resp))
		}
		tok := accessOf(t, env, b)
		is := identities(t, env, tok)
		if len(is) != 1 || is[0]["type"] != "social" || is[0]["provider"] != "acme" || is[0]["name"] != "acme ID" || is[0]["email"] != email {
			t.Fatalf("identities = %v; want the one acme identity of %s", is, email)
		}
		id := is[0]["id"].(string)
		stranger := env.Register(t)
		env.Call(t, "DELETE", "/v1/me/identities/"+id, stranger.Token, nil).Want(t, 404)
		env.Call(t, "DELETE", "/v1/me/identities/not-an-id", tok, nil).Want(t, 404)
		// No password and no passkey: the last identity stays.
		env.Call(t, "DELETE", "/v1/me/identities/"+id, tok, nil).Want(t, 409)
		if len(identities(t, env, tok)) != 1 {
			t.Fatal("the last identity was unlinked")
		}
		// An account with a password may unlink it.
		a := env.Register(t)
		env.VerifyEmail(t, a)
		mine := map[string]any{"sub": "m-" + testenv.RandomHex(3), "email": a.Email, "email_verified": true}
		resp, _ = socialIn(t, env, idp, "acme", mine)
		link, _ := body(t, resp)["link_token"].(string)
		fresh := env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
		env.Call(t, "POST", "/v1/sso/link", fresh, map[string]string{"link_token": link}).Want(t, 200)
		is = identities(t, env, fresh)
		if len(is) != 1 || is[0]["email"] != a.Email {
			t.Fatalf("identities after linking = %v; want one of %s", is, a.Email)
		}
		env.Call(t, "DELETE", "/v1/me/identities/"+is[0]["id"].(string), fresh, nil).Want(t, 200)
		if n := len(identities(t, env, fresh)); n != 0 {
			t.Errorf("%d identities after unlinking; want none", n)
		}
		if resp, b := socialIn(t, env, idp, "acme", mine); resp.StatusCode != http.StatusConflict || sessionUser(t, env, b) != "" {
			t.Errorf("sign-in of the unlinked subject answered %d; want 409 and no session", resp.StatusCode)
		}
		// An old sign-in may not unlink (recent sign-in).
		env.Clock.Advance(16 * time.Minute)
		env.Call(t, "DELETE", "/v1/me/identities/"+id, accessOf(t, env, b), nil).Want(t, 403)
	})
}

// TestSocialSquatterUnlinked: an identity a squatter linked to an
// account of someone else's address (the provider not vouching for it)
// is unlinked when the mailbox's owner proves the address.
func TestSocialSquatterUnlinked(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		email := "victim-" + testenv.RandomHex(3) + "@example.com"
		squatter := map[string]any{"sub": "sq-" + testenv.RandomHex(3), "email": email, "email_verified": false}
		resp, b := socialIn(t, env, idp, "acme", squatter)
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) == "" {
			t.Fatalf("squatter's sign-up answered %d; want 303", resp.StatusCode)
		}
		// The owner of the mailbox signs in with an emailed link.
		env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, email)}).Want(t, 200)
		if resp, b := socialIn(t, env, idp, "acme", squatter); resp.StatusCode == http.StatusSeeOther || sessionUser(t, env, b) != "" {
			t.Errorf("squatter's identity still signs in (%d)", resp.StatusCode)
		}
	})
}
