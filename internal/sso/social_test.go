package sso_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// socialOpts configures the instance with the social providers idps
// (named "acme", "beta", … in order; labels "Acme ID", …).
func socialOpts(idps ...*provider) testenv.Options {
	o := testenv.Options{AllowPrivate: true}
	for i, p := range idps {
		name := []string{"acme", "beta"}[i]
		o.Social = append(o.Social, sso.SocialProvider{Name: name, Label: name + " ID", Issuer: p.URL, ClientID: idpClient, ClientSecret: idpSecret})
	}
	return o
}

// authorizeSocial starts a sign-in at social provider name in b and
// returns the provider's redirect back to the callback (not followed).
func authorizeSocial(t *testing.T, env *testenv.Env, b *browser, name string) string {
	t.Helper()
	resp := b.get(t, env.URL+"/v1/sso/social/"+name+"/start?next=/console")
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("start answered %d %v; want 302", resp.StatusCode, body(t, resp))
	}
	resp = b.get(t, resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("provider answered %d; want 302", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// socialIn runs a whole sign-in at idp (named name) as claims.
func socialIn(t *testing.T, env *testenv.Env, idp *provider, name string, claims map[string]any) (*http.Response, *browser) {
	t.Helper()
	idp.as(claims)
	b := newBrowser(env)
	return b.get(t, authorizeSocial(t, env, b, name)), b
}

// verified reads whether the account id has its address verified.
func verified(t *testing.T, env *testenv.Env, id string) bool {
	t.Helper()
	var v bool
	if err := env.Store.DB().QueryRow(`SELECT email_verified FROM users WHERE id = $1`, id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSocialSignUp: a first social sign-in makes an account, its address
// verified only when the provider asserts email_verified; the session
// names the method (amr social) and the next sign-in of the subject finds
// the same account. The providers are listed for sign-in buttons.
func TestSocialSignUp(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		r := env.Call(t, "GET", "/v1/sso/providers", "", nil).Want(t, 200)
		ps, _ := r.Get("providers").([]any)
		if first, _ := ps[0].(map[string]any); len(ps) != 1 || first["name"] != "acme" || first["label"] != "acme ID" {
			t.Errorf("providers = %s; want acme, labelled", r.Body)
		}
		env.Call(t, "GET", "/v1/sso/social/nobody/start", "", nil).Want(t, 404)
		for _, v := range []any{true, false, nil} {
			email := "s-" + testenv.RandomHex(3) + "@example.com"
			claims := map[string]any{"sub": "s-" + testenv.RandomHex(4), "email": email, "email_verified": v, "name": "Sam Social"}
			resp, b := socialIn(t, env, idp, "acme", claims)
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console" {
				t.Fatalf("email_verified %v: callback answered %d %v; want 303 to /console", v, resp.StatusCode, body(t, resp))
			}
			id := sessionUser(t, env, b)
			if id == "" || id != userByEmail(t, env, email) {
				t.Fatalf("session user = %q; want the new account of %s", id, email)
			}
			if got := verified(t, env, id); got != (v == true) {
				t.Errorf("email_verified %v: account verified = %v", v, got)
			}
			access := env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": b.cookies["gatehouse_session"]}).Want(t, 200).Str("access_token")
			if c := testenv.Claims(t, access); !slices.Contains(testenv.Strings(c["amr"]), "social") {
				t.Errorf("access token claims = %v; want amr [social]", c)
			}
			resp, b = socialIn(t, env, idp, "acme", claims)
			if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != id {
				t.Errorf("second sign-in answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), id)
			}
		}
	})
}

// TestSocialLinking: an existing account is linked only when the
// provider asserts email_verified and the account's address is verified,
// and only once the person proves the account; every other case is a
// refusal that opens no session and links nothing.
func TestSocialLinking(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		refused := func(t *testing.T, resp *http.Response, b *browser) {
			t.Helper()
			m := body(t, resp)
			if resp.StatusCode != http.StatusConflict || m["link_token"] != nil || sessionUser(t, env, b) != "" {
				t.Errorf("callback answered %d %v (session %q); want 409 without link_token or session", resp.StatusCode, m, sessionUser(t, env, b))
			}
		}
		for _, v := range []any{false, nil, "false"} {
			a := env.Register(t)
			env.VerifyEmail(t, a)
			resp, b := socialIn(t, env, idp, "acme", map[string]any{"sub": "x-" + testenv.RandomHex(3), "email": a.Email, "email_verified": v})
			refused(t, resp, b)
		}
		t.Run("unverified account", func(t *testing.T) {
			a := env.Register(t)
			resp, b := socialIn(t, env, idp, "acme", map[string]any{"sub": "u-" + testenv.RandomHex(3), "email": a.Email, "email_verified": true})
			refused(t, resp, b)
		})
		t.Run("verified both", func(t *testing.T) {
			a := env.Register(t)
			env.VerifyEmail(t, a)
			claims := map[string]any{"sub": "v-" + testenv.RandomHex(3), "email": a.Email, "email_verified": true}
			resp, b := socialIn(t, env, idp, "acme", claims)
			if resp.StatusCode != http.StatusConflict || sessionUser(t, env, b) != "" {
				t.Fatalf("callback answered %d (session %q); want 409 and no session", resp.StatusCode, sessionUser(t, env, b))
			}
			link, _ := body(t, resp)["link_token"].(string)
			if link == "" {
				t.Fatal("no link_token")
			}
			// Not linked yet: the same subject is asked again.
			if resp, _ := socialIn(t, env, idp, "acme", claims); resp.StatusCode != http.StatusConflict {
				t.Fatalf("second sign-in before proof answered %d; want 409", resp.StatusCode)
			}
			// A session opened by social sign-in is no proof of the account.
			_, other := socialIn(t, env, idp, "acme", map[string]any{"sub": "o-" + testenv.RandomHex(3), "email": "o-" + testenv.RandomHex(3) + "@example.com"})
			otherAccess := env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": other.cookies["gatehouse_session"]}).Want(t, 200).Str("access_token")
			env.Call(t, "POST", "/v1/sso/link", otherAccess, map[string]string{"link_token": link}).Want(t, 403)
			stranger := env.Register(t)
			env.Call(t, "POST", "/v1/sso/link", stranger.Token, map[string]string{"link_token": link}).Want(t, 404)
			tok := env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
			env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 200)
			env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 404)
			resp, b = socialIn(t, env, idp, "acme", claims)
			if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != a.UserID {
				t.Errorf("sign-in after linking answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), a.UserID)
			}
		})
	})
}

// TestSocialRefusals: state replay, another browser, nonce tampering and
// provider mix-ups (the RFC 9207 iss of provider A on B's callback, an ID
// token of issuer A from B, A's code on B's flow) are refused without a
// session.
func TestSocialRefusals(t *testing.T) {
	a, b := newProvider(t), newProvider(t)
	testenv.RunWith(t, socialOpts(a, b), func(t *testing.T, env *testenv.Env) {
		good := func() map[string]any {
			return map[string]any{"sub": "r-" + testenv.RandomHex(3), "email": "r-" + testenv.RandomHex(3) + "@example.com"}
		}
		refused := func(t *testing.T, resp *http.Response, br *browser) {
			t.Helper()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("callback answered %d %v; want 401", resp.StatusCode, body(t, resp))
			}
			if br != nil && sessionUser(t, env, br) != "" {
				t.Error("a session cookie was set")
			}
		}
		t.Run("state replayed", func(t *testing.T) {
			b.as(good())
			br := newBrowser(env)
			back := authorizeSocial(t, env, br, "beta")
			cookie := br.cookies["gatehouse_sso"]
			if resp := br.get(t, back); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("first callback answered %d; want 303", resp.StatusCode)
			}
			again := newBrowser(env)
			again.cookies["gatehouse_sso"] = cookie
			refused(t, again.get(t, back), again)
		})
		t.Run("another browser", func(t *testing.T) {
			b.as(good())
			back := authorizeSocial(t, env, newBrowser(env), "beta")
			other := newBrowser(env)
			authorizeSocial(t, env, other, "beta")
			refused(t, other.get(t, back), other)
		})
		t.Run("nonce replaced", func(t *testing.T) {
			c := good()
			c["nonce"] = "not-the-flow-nonce"
			resp, br := socialIn(t, env, b, "beta", c)
			refused(t, resp, br)
		})
		t.Run("iss parameter of another provider", func(t *testing.T) {
			b.as(good())
			br := newBrowser(env)
			u, _ := url.Parse(authorizeSocial(t, env, br, "beta"))
			q := u.Query()
			q.Set("iss", a.URL)
			u.RawQuery = q.Encode()
			refused(t, br.get(t, u.String()), br)
		})
		t.Run("ID token of another issuer", func(t *testing.T) {
			c := good()
			c["iss"] = a.URL
			resp, br := socialIn(t, env, b, "beta", c)
			refused(t, resp, br)
		})
		t.Run("code of another provider", func(t *testing.T) {
			a.as(good())
			fromA, _ := url.Parse(authorizeSocial(t, env, newBrowser(env), "acme"))
			b.as(good())
			br := newBrowser(env)
			u, _ := url.Parse(authorizeSocial(t, env, br, "beta"))
			q := u.Query()
			q.Set("code", fromA.Query().Get("code"))
			u.RawQuery = q.Encode()
			refused(t, br.get(t, u.String()), br)
		})
	})
}

// TestSocialEnforcedDomain: an address in a domain whose workspace
// enforces SSO cannot sign up or in through a social provider.
func TestSocialEnforcedDomain(t *testing.T) {
	idp := newProvider(t)
	testenv.RunWith(t, socialOpts(idp), func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"enforce": true}).Want(t, 200)
		email := "e-" + testenv.RandomHex(3) + "@" + f.domain
		resp, b := socialIn(t, env, idp, "acme", map[string]any{"sub": "e-" + testenv.RandomHex(3), "email": email, "email_verified": true})
		if resp.StatusCode != http.StatusForbidden || sessionUser(t, env, b) != "" || userByEmail(t, env, email) != "" {
			t.Errorf("callback answered %d (session %q); want 403, no session and no account", resp.StatusCode, sessionUser(t, env, b))
		}
	})
}
