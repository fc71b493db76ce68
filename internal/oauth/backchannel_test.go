package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// logoutClaims are a verified logout token's claims.
type logoutClaims struct {
	jwt.Claims
	SID    string                    `json:"sid"`
	Events map[string]map[string]any `json:"events"`
	Nonce  *string                   `json:"nonce"`
	alg    string
	kid    string
}

const backchannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// jwks fetches the env's published JWK Set.
func jwks(t testing.TB, env *testenv.Env) jose.JSONWebKeySet {
	t.Helper()
	res, err := env.Client.Get(env.URL + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var set jose.JSONWebKeySet
	data, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatalf("jwks %s: %v", data, err)
	}
	return set
}

// logoutTokens verifies every logout token rc got against the env's JWKS
// (form-encoded POST, typ logout+jwt, issuer, events, no nonce, a short
// life) and returns their claims, oldest first.
func logoutTokens(t testing.TB, env *testenv.Env, rc *testenv.Receiver) []logoutClaims {
	t.Helper()
	set := jwks(t, env)
	var out []logoutClaims
	for _, d := range rc.Events("") {
		form, err := url.ParseQuery(string(d.Body))
		if err != nil || len(form) != 1 || form.Get("logout_token") == "" {
			t.Fatalf("back-channel body %q; want logout_token=... alone", d.Body)
		}
		raw := form.Get("logout_token")
		tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
		if err != nil {
			t.Fatalf("logout token %q: %v", raw, err)
		}
		h := tok.Headers[0]
		if typ, _ := h.ExtraHeaders["typ"].(string); typ != "logout+jwt" {
			t.Fatalf("logout token typ %q; want logout+jwt", typ)
		}
		keys := set.Key(h.KeyID)
		if len(keys) != 1 {
			t.Fatalf("logout token kid %q is not in the JWKS", h.KeyID)
		}
		c := logoutClaims{alg: h.Algorithm, kid: h.KeyID}
		if err := tok.Claims(keys[0].Key, &c); err != nil {
			t.Fatalf("logout token signature: %v", err)
		}
		if c.Issuer != env.URL || c.Subject == "" || c.SID == "" || c.ID == "" || c.IssuedAt == nil || c.Expiry == nil ||
			c.Expiry.Time().Sub(c.IssuedAt.Time()) > 5*time.Minute || !c.Expiry.Time().After(c.IssuedAt.Time()) {
			t.Fatalf("logout token claims %+v; want iss, sub, sid, jti, iat and a short exp", c)
		}
		if ev, ok := c.Events[backchannelEvent]; !ok || len(ev) != 0 || len(c.Events) != 1 {
			t.Fatalf("logout token events %v; want {%q: {}}", c.Events, backchannelEvent)
		}
		if c.Nonce != nil {
			t.Fatal("logout token carries a nonce")
		}
		if len(c.Audience) != 1 {
			t.Fatalf("logout token aud %v; want one client", c.Audience)
		}
		out = append(out, c)
	}
	return out
}

// waitLogout waits up to 5 s for n logout tokens naming sid and returns
// the last; it checks they are for clientID and user sub.
func waitLogout(t testing.TB, env *testenv.Env, rc *testenv.Receiver, clientID, sub, sid string, n int) logoutClaims {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got []logoutClaims
		for _, c := range logoutTokens(t, env, rc) {
			if c.SID == sid {
				got = append(got, c)
			}
		}
		if len(got) >= n {
			c := got[n-1]
			if c.Audience[0] != clientID || c.Subject != sub {
				t.Fatalf("logout token for sid %s: aud %v sub %s; want %s and %s", sid, c.Audience, c.Subject, clientID, sub)
			}
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d logout tokens for session %s after 5 s; want %d (got %d deliveries in all)", len(got), sid, n, len(rc.Events("")))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noLogout checks, after the queue had time to work, that no logout token
// names any of sids.
func noLogout(t testing.TB, env *testenv.Env, rc *testenv.Receiver, sids ...string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	for _, c := range logoutTokens(t, env, rc) {
		for _, sid := range sids {
			if c.SID == sid {
				t.Fatalf("a logout token names session %s (client %v, sub %s); want none", sid, c.Audience, c.Subject)
			}
		}
	}
}

// grantSession is one OAuth grant session a test ends.
type grantSession struct {
	access, refresh, sid string
}

// approve runs the code flow for clientID in signed-in browser b into
// orgID and returns the grant session.
func approve(t *testing.T, env *testenv.Env, b *testenv.Browser, clientID, orgID string) grantSession {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	authURL := oauthConfig(env, clientID).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	code := consentAt(t, b, authURL, orgID).Query().Get("code")
	r := tokenPost(t, env, exchangeForm(clientID, code, verifier)).Want(t, 200)
	g := grantSession{access: r.Str("access_token"), refresh: r.Str("refresh_token")}
	g.sid, _, _ = strings.Cut(g.refresh, ".")
	return g
}

// browserSession is the refresh token of browser b's Gatehouse session.
func browserSession(t *testing.T, env *testenv.Env, b *testenv.Browser) string {
	t.Helper()
	u, _ := url.Parse(env.URL)
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == "gatehouse_session" {
			return c.Value
		}
	}
	t.Fatal("the browser has no session cookie")
	return ""
}

// TestBackchannelLogout: a logout token reaches each affected client's
// backchannel_logout_uri whenever a session ends (issue 25 item 2).
func TestBackchannelLogout(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{AllowPrivate: true, RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		rc.Fail.Store(false)
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "backchannel_logout_uri": rc.URL + "/backchannel"})
		esID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "backchannel_logout_uri": rc.URL + "/es",
			"id_token_signed_response_alg": "ES256"})
		plainID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}})
		session := func(t *testing.T) (*testenv.Account, *testenv.Browser) {
			a := env.Register(t)
			b := env.NewBrowser(t)
			signIn(t, b, a)
			return a, b
		}

		t.Run("sign-out through the API tells the grants approved from that session; the grant's own sign-out ends it", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			other := approve(t, env, signedInBrowser(t, env, a), clientID, a.OrgID) // approved from another sign-in
			env.Call(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": browserSession(t, env, b)}).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
			noLogout(t, env, rc, other.sid)
			// Told, not ended (offline access): its refresh still works.
			tokenPost(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.refresh}, "client_id": {clientID}}).Want(t, 200)
			env.Call(t, "POST", "/v1/auth/logout", "", map[string]string{"refresh_token": other.refresh}).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, other.sid, 1)
		})
		t.Run("sign-out on the pages", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			if p := b.Post(t, "/signout", url.Values{}); p.Status != http.StatusSeeOther {
				t.Fatalf("sign-out = %d", p.Status)
			}
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
		})
		t.Run("RP-initiated logout", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			p := b.Get(t, logoutURL(url.Values{"id_token_hint": {hintFor(t, env, a, clientID, g.sid)}}))
			if p.Status != http.StatusOK {
				t.Fatalf("logout = %d", p.Status)
			}
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
		})
		t.Run("a session revoked in /v1/me/sessions", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			sid, _, _ := strings.Cut(browserSession(t, env, b), ".")
			env.Call(t, "DELETE", "/v1/me/sessions/"+sid, a.Access, nil).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
		})
		t.Run("a grant revoked", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			var id string
			for _, gr := range env.Call(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200).List(t, "grants") {
				if gr["client_id"] == clientID {
					id = gr["id"].(string)
				}
			}
			env.Call(t, "DELETE", "/v1/me/grants/"+id, a.Access, nil).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
		})
		t.Run("RFC 7009 revocation, signed with the client's algorithm", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, esID, a.OrgID)
			wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {g.refresh}, "client_id": {esID}}))
			if c := waitLogout(t, env, rc, esID, a.UserID, g.sid, 1); c.alg != "ES256" {
				t.Fatalf("logout token alg %s; want the client's ES256", c.alg)
			}
		})
		t.Run("a password reset tells every client of the account, and no one else's", func(t *testing.T) {
			a, b := session(t)
			g1 := approve(t, env, b, clientID, a.OrgID)
			g2 := approve(t, env, b, esID, a.OrgID)
			plain := approve(t, env, b, plainID, a.OrgID)
			bystander, bb := session(t)
			gb := approve(t, env, bb, clientID, bystander.OrgID)
			before := len(env.MailTexts(a.Email, "http://web.test/reset-password?token="))
			env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": a.Email}).Want(t, 200)
			tok := env.WaitMailToken(t, a.Email, "http://web.test/reset-password?token=", before+1)
			env.Call(t, "POST", "/v1/auth/recover/verify", "", map[string]string{"token": tok, "new_password": "another-password-" + testenv.RandomHex(4)}).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, g1.sid, 1)
			waitLogout(t, env, rc, esID, a.UserID, g2.sid, 1)
			noLogout(t, env, rc, gb.sid, plain.sid)
		})
		t.Run("account deletion", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			env.Call(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
		})
		t.Run("removal from a workspace tells the grant sessions in it only", func(t *testing.T) {
			owner, org := env.Team(t)
			m := env.Join(t, owner, org, "member")
			stay := env.Join(t, owner, org, "member")
			b := signedInBrowser(t, env, m)
			inOrg := approve(t, env, b, clientID, org)
			personal := approve(t, env, b, clientID, m.OrgID)
			staying := approve(t, env, signedInBrowser(t, env, stay), clientID, org)
			env.Call(t, "DELETE", "/v1/orgs/"+org+"/members/"+m.UserID, owner.Token, nil).Want(t, 200)
			waitLogout(t, env, rc, clientID, m.UserID, inOrg.sid, 1)
			noLogout(t, env, rc, personal.sid, staying.sid)
		})
		t.Run("a receiver answering 500 gets the token again", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			rc.Fail.Store(true)
			wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {g.refresh}, "client_id": {clientID}}))
			first := waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
			rc.Fail.Store(false)
			second := waitLogout(t, env, rc, clientID, a.UserID, g.sid, 2)
			if first.ID == second.ID {
				t.Fatal("the retry sent the same jti; want a token signed at each try")
			}
		})
		t.Run("a key rotated before a retry signs the retry", func(t *testing.T) {
			a, b := session(t)
			g := approve(t, env, b, clientID, a.OrgID)
			rc.Fail.Store(true)
			wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {g.refresh}, "client_id": {clientID}}))
			first := waitLogout(t, env, rc, clientID, a.UserID, g.sid, 1)
			kid, err := env.Keys.Rotate(context.Background(), "RS256", 0)
			if err != nil {
				t.Fatal(err)
			}
			// The receiver keeps refusing until a retry signed with the new
			// key arrives: a retry signed just before the rotation may
			// still be on its way, and answered 200 it would be the last.
			deadline := time.Now().Add(5 * time.Second)
			for n := 2; ; n++ {
				c := waitLogout(t, env, rc, clientID, a.UserID, g.sid, n)
				if c.kid == kid && kid != first.kid {
					break // verified against the JWKS, which publishes both keys
				}
				if time.Now().After(deadline) {
					t.Fatalf("no logout token signed with the new key %s (first with %s)", kid, first.kid)
				}
			}
			rc.Fail.Store(false)
		})
	})
}

// TestBackchannelLogoutPrivateAddress: without GATEHOUSE_WEBHOOK_ALLOW_PRIVATE
// no logout token goes to a private address (SSRF).
func TestBackchannelLogoutPrivateAddress(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		clientID := registerClient(t, env, map[string]any{"redirect_uris": []string{redirect}, "backchannel_logout_uri": rc.URL + "/backchannel"})
		a := env.Register(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		g := approve(t, env, b, clientID, a.OrgID)
		wantRevokeOK(t, postForm(t, env, "/oauth/revoke", url.Values{"token": {g.refresh}, "client_id": {clientID}}))
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(env.Logs.String(), "non-public address") {
			if time.Now().After(deadline) {
				t.Fatalf("no refused delivery logged after 5 s; logs:\n%s", env.Logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := len(rc.Events("")); n != 0 || rc.Conns() != 0 {
			t.Fatalf("the private receiver got %d deliveries on %d connections; want none", n, rc.Conns())
		}
	})
}

// signedInBrowser is a new browser signed in as a.
func signedInBrowser(t *testing.T, env *testenv.Env, a *testenv.Account) *testenv.Browser {
	t.Helper()
	b := env.NewBrowser(t)
	signIn(t, b, a)
	return b
}
