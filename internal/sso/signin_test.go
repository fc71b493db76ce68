package sso_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// meta is an audit entry's meta, decoded.
func meta(e map[string]any) map[string]any {
	var m map[string]any
	s, _ := e["meta"].(string)
	json.Unmarshal([]byte(s), &m)
	return m
}

// sessionUser is the user of the browser session cookie b holds ("" when none).
func sessionUser(t *testing.T, env *testenv.Env, b *browser) string {
	t.Helper()
	v := b.cookies["gatehouse_session"]
	if v == "" {
		return ""
	}
	s, err := env.Svc.BrowserUser(context.Background(), v)
	if err != nil {
		return ""
	}
	return s.User.ID
}

// userByEmail is the id of the account of email ("" when none).
func userByEmail(t *testing.T, env *testenv.Env, email string) string {
	t.Helper()
	var id string
	env.Store.DB().QueryRow(`SELECT id FROM users WHERE email = $1`, email).Scan(&id)
	return id
}

// TestSignInProvisions: a first sign-in creates the account, verified,
// as a member with the connection's default role (never owner), opens a
// browser session and lands on next; the second signs in to the same
// account through its link. Both are audited with their outcome.
func TestSignInProvisions(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		email := "ann-" + testenv.RandomHex(3) + "@" + f.domain
		claims := map[string]any{"sub": "ann-sub", "email": email, "name": "Ann Acme"}
		resp, b := f.signIn(t, claims)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console" {
			t.Fatalf("callback answered %d to %q, %v; want 303 to /console", resp.StatusCode, resp.Header.Get("Location"), body(t, resp))
		}
		id := sessionUser(t, env, b)
		if id == "" || id != userByEmail(t, env, email) {
			t.Fatalf("session user = %q; want the new account of %s", id, email)
		}
		if role := env.Role(t, f.org, id); role != "member" {
			t.Errorf("role = %q; want member", role)
		}
		// The session's tokens name the method and the connection's workspace.
		access := env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": b.cookies["gatehouse_session"]}).Want(t, 200).Str("access_token")
		if c := testenv.Claims(t, access); !slices.Contains(testenv.Strings(c["amr"]), "sso") {
			t.Errorf("access token claims = %v; want amr [sso]", c)
		}
		if org, role, _ := testenv.TokenOrg(t, access); org != f.org || role != "member" {
			t.Errorf("token org = %s as %s; want %s as member", org, role, f.org)
		}
		resp, b = f.signIn(t, claims)
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != id {
			t.Errorf("second sign-in answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), id)
		}
		n := 0
		for _, e := range env.Audit(t, f.owner.Token, f.org, "") {
			if e["action"] == "identity.sso.sign_in" {
				if m := meta(e); m["outcome"] != "signed_in" {
					t.Errorf("sign-in entry meta = %v; want outcome signed_in", m)
				}
				n++
			}
		}
		if n != 2 {
			t.Errorf("sso.sign_in entries = %d; want 2", n)
		}
		if logs := env.Logs.String(); !strings.Contains(logs, "method=sso sso_connection_id="+f.conn+" user_id="+id) {
			t.Errorf("no auth.signin.success event of method sso in the log:\n%s", logs)
		}
	})
}

// TestSignInRefusals: each attack on the callback is refused and no
// session is opened.
func TestSignInRefusals(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		good := func() map[string]any {
			return map[string]any{"sub": "s-" + testenv.RandomHex(3), "email": "p-" + testenv.RandomHex(3) + "@" + f.domain}
		}
		refused := func(t *testing.T, resp *http.Response, b *browser, status int) {
			t.Helper()
			if resp.StatusCode != status {
				t.Errorf("callback answered %d %v; want %d", resp.StatusCode, body(t, resp), status)
			}
			if b != nil && sessionUser(t, env, b) != "" {
				t.Error("a session cookie was set")
			}
		}
		t.Run("state tampered", func(t *testing.T) {
			f.idp.as(good())
			b := newBrowser(env)
			back := f.authorize(t, b)
			u, _ := url.Parse(back)
			q := u.Query()
			q.Set("state", q.Get("state")+"x")
			u.RawQuery = q.Encode()
			refused(t, b.get(t, u.String()), b, 401)
		})
		t.Run("state replayed", func(t *testing.T) {
			f.idp.as(good())
			b := newBrowser(env)
			back := f.authorize(t, b)
			cookie := b.cookies["gatehouse_sso"]
			if resp := b.get(t, back); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("first callback answered %d; want 303", resp.StatusCode)
			}
			again := newBrowser(env)
			again.cookies["gatehouse_sso"] = cookie
			refused(t, again.get(t, back), again, 401)
		})
		t.Run("another browser", func(t *testing.T) {
			f.idp.as(good())
			b := newBrowser(env)
			back := f.authorize(t, b)
			other := newBrowser(env)
			f.authorize(t, other) // a flow of its own, its own cookie
			refused(t, other.get(t, back), other, 401)
		})
		t.Run("no browser cookie", func(t *testing.T) {
			f.idp.as(good())
			back := f.authorize(t, newBrowser(env))
			refused(t, newBrowser(env).get(t, back), nil, 401)
		})
		t.Run("nonce mismatch", func(t *testing.T) {
			c := good()
			c["nonce"] = "not-the-flow-nonce"
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 401)
		})
		t.Run("issuer mix-up", func(t *testing.T) {
			c := good()
			c["iss"] = "https://other-idp.test"
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 401)
		})
		t.Run("another audience", func(t *testing.T) {
			c := good()
			c["aud"] = "another-client"
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 401)
		})
		t.Run("key not in the JWKS", func(t *testing.T) {
			k, _ := rsa.GenerateKey(rand.Reader, 2048)
			f.idp.SignWith(k)
			defer f.idp.SignWith(nil)
			resp, b := f.signIn(t, good())
			refused(t, resp, b, 401)
		})
		t.Run("email not verified", func(t *testing.T) {
			c := good()
			c["email_verified"] = false
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
		})
		t.Run("email_verified missing", func(t *testing.T) {
			c := good()
			c["email_verified"] = nil
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
		})
		t.Run("Entra's xms_edov false", func(t *testing.T) {
			c := good()
			c["email_verified"], c["xms_edov"] = nil, false
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
		})
		t.Run("xms_edov true beside email_verified false", func(t *testing.T) {
			c := good()
			c["email_verified"], c["xms_edov"] = false, true
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
		})
		t.Run("address outside the bound domains", func(t *testing.T) {
			c := good()
			c["email"] = "eve@" + testenv.Domain()
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
		})
		t.Run("another workspace's domain", func(t *testing.T) {
			// Workspace B verified its domain; A's provider asserts an
			// address there: A's connection does not serve it.
			other, org := env.Team(t)
			theirs := testenv.Domain()
			env.VerifiedDomain(t, other.Token, org, theirs, "")
			c := good()
			c["email"] = "boss@" + theirs
			resp, b := f.signIn(t, c)
			refused(t, resp, b, 403)
			if userByEmail(t, env, "boss@"+theirs) != "" {
				t.Error("an account was created at another workspace's domain")
			}
		})
		if logs := env.Logs.String(); !strings.Contains(logs, "method=sso sso_connection_id="+f.conn+" reason=") {
			t.Error("no auth.signin.failure event of method sso in the log")
		}
		refusedEntries := 0
		for _, e := range env.Audit(t, f.owner.Token, f.org, "limit=100") {
			if m := meta(e); e["action"] == "identity.sso.sign_in" && m["outcome"] == "refused" {
				refusedEntries++
			}
		}
		if refusedEntries < 6 {
			t.Errorf("refused sign-in entries = %d; want one per refused attempt after the flow", refusedEntries)
		}
	})
}

// TestSignInExistingAccount: an account with the address is never linked
// silently: the sign-in answers 409 with a link token, which only a fresh
// password sign-in to that account confirms; then SSO signs in to it. An
// account whose address is unconfirmed is refused.
func TestSignInExistingAccount(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		t.Run("verified", func(t *testing.T) {
			a := env.VerifiedAt(t, f.domain)
			claims := map[string]any{"sub": "bob-" + testenv.RandomHex(3), "email": a.Email}
			resp, b := f.signIn(t, claims)
			if resp.StatusCode != http.StatusConflict || sessionUser(t, env, b) != "" {
				t.Fatalf("callback answered %d (session %q); want 409 and no session", resp.StatusCode, sessionUser(t, env, b))
			}
			link, _ := body(t, resp)["link_token"].(string)
			if link == "" {
				t.Fatal("no link_token")
			}
			// Someone else's session cannot confirm it.
			stranger := env.Register(t)
			env.Call(t, "POST", "/v1/sso/link", stranger.Token, map[string]string{"link_token": link}).Want(t, 404)
			// The account's owner, freshly signed in with the password.
			tok := env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200).Str("access_token")
			env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 200)
			// Used once.
			env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 404)
			resp, b = f.signIn(t, claims)
			if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != a.UserID {
				t.Errorf("sign-in after linking answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), a.UserID)
			}
			if role := env.Role(t, f.org, a.UserID); role != "member" {
				t.Errorf("role = %q; want member", role)
			}
		})
		t.Run("unverified", func(t *testing.T) {
			a := env.RegisterAt(t, f.domain)
			resp, b := f.signIn(t, map[string]any{"sub": "d-" + testenv.RandomHex(3), "email": a.Email})
			m := body(t, resp)
			if resp.StatusCode != http.StatusConflict || m["link_token"] != nil || sessionUser(t, env, b) != "" {
				t.Errorf("callback answered %d %v; want 409 without link_token or session", resp.StatusCode, m)
			}
		})
	})
}

// TestSignInEntraDomainOwnerVerified: Microsoft Entra sends no
// email_verified for organization accounts but, when asked, xms_edov (the
// address's domain verified by the tenant): a workspace connection takes
// it in place of email_verified for an address of its verified domains.
func TestSignInEntraDomainOwnerVerified(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		email := "entra-" + testenv.RandomHex(3) + "@" + f.domain
		resp, _ := f.signIn(t, map[string]any{"sub": "oid-" + testenv.RandomHex(4), "email": email, "xms_edov": true, "name": "Erin Entra"})
		if resp.StatusCode != http.StatusSeeOther || userByEmail(t, env, email) == "" {
			t.Fatalf("sign-in with xms_edov answered %d; want 303 and an account", resp.StatusCode)
		}
	})
}

// TestSignInUserInfo: a provider whose ID token carries no address gives
// it at its UserInfo endpoint, which is read then; a UserInfo answer
// about another subject is refused.
func TestSignInUserInfo(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		email := "ui-" + testenv.RandomHex(3) + "@" + f.domain
		f.idp.SetUserInfo(map[string]any{"sub": "ui-sub", "email": email, "email_verified": true, "name": "Ui Person"})
		resp, b := f.signIn(t, map[string]any{"sub": "ui-sub", "email": nil, "email_verified": nil})
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) == "" || sessionUser(t, env, b) != userByEmail(t, env, email) {
			t.Fatalf("callback answered %d %v; want 303 and a session for %s", resp.StatusCode, body(t, resp), email)
		}
		other := "ui2-" + testenv.RandomHex(3) + "@" + f.domain
		f.idp.SetUserInfo(map[string]any{"sub": "someone-else", "email": other, "email_verified": true})
		resp, b = f.signIn(t, map[string]any{"sub": "ui-sub-2", "email": nil, "email_verified": nil})
		if resp.StatusCode/100 != 4 || sessionUser(t, env, b) != "" || userByEmail(t, env, other) != "" {
			t.Errorf("UserInfo about another subject: callback answered %d; want a refusal, no session, no account", resp.StatusCode)
		}
	})
}
