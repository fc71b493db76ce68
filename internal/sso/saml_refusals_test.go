package sso_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSAMLRefusals: each attack on the assertion consumer service is
// refused, no session is opened, and no account is made.
func TestSAMLRefusals(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		refused := func(t *testing.T, resp *http.Response, b *browser, status int, email string) {
			t.Helper()
			if resp.StatusCode != status {
				t.Errorf("ACS answered %d %v; want %d", resp.StatusCode, body(t, resp), status)
			}
			if b != nil && sessionUser(t, env, b) != "" {
				t.Error("a session cookie was set")
			}
			if email != "" && userByEmail(t, env, email) != "" {
				t.Errorf("an account was made for %s", email)
			}
		}
		fresh := func() string { return "p-" + testenv.RandomHex(3) + "@" + f.domain }
		str := func(s string) *string { return &s }
		now := env.Clock.Now()
		other := newKeyCert(t)
		for _, c := range []struct {
			name   string
			change func(*assertion)
			status int
		}{
			{"unsigned", func(a *assertion) { a.signAssertion = false }, 401},
			{"signed by another key", func(a *assertion) { a.signer = &other }, 401},
			{"response signed by another key", func(a *assertion) { a.signAssertion, a.signResponse, a.signer = false, true, &other }, 401},
			{"assertion signed by another key inside a signed response", func(a *assertion) { a.signResponse = true; a.signer = &other }, 401},
			{"second assertion inserted into the signed response", func(a *assertion) { a.signAssertion, a.signResponse, a.wrapAfterSigning = false, true, true }, 401},
			{"unsigned assertion beside the signed one", func(a *assertion) { a.wrapUnsigned = true }, 401},
			{"expired", func(a *assertion) { a.notOnOrAfter = now.Add(-3 * time.Minute) }, 401},
			{"not yet valid", func(a *assertion) { a.notBefore = now.Add(5 * time.Minute) }, 401},
			{"another audience", func(a *assertion) { a.audience = "https://other-sp.test/metadata" }, 401},
			{"no audience restriction", func(a *assertion) { a.noAudience = true }, 401},
			{"another destination", func(a *assertion) { a.destination = str("https://other-sp.test/acs") }, 401},
			{"no destination", func(a *assertion) { a.destination = str("") }, 401},
			{"another recipient", func(a *assertion) { a.recipient = str("https://other-sp.test/acs") }, 401},
			{"InResponseTo another request", func(a *assertion) { a.requestID = "_not-our-request" }, 401},
			{"InResponseTo missing", func(a *assertion) { a.requestID = "" }, 401},
			{"address outside the bound domains", func(a *assertion) { a.email = "eve@" + testenv.Domain() }, 403},
			// The signature covers the text without comments; the whole
			// text is read, so the address is at evil.test, not ours.
			{"comment inside NameID", func(a *assertion) {
				a.nameIDXML = "victim@" + f.domain + "<!---->.evil.test"
				a.email = "victim@" + f.domain + ".evil.test"
			}, 403},
		} {
			t.Run(c.name, func(t *testing.T) {
				email := fresh()
				resp, b := f.signIn(t, email, c.change)
				refused(t, resp, b, c.status, email)
			})
		}
		t.Run("replayed", func(t *testing.T) {
			email := fresh()
			b := newBrowser(env)
			id, relay := f.begin(t, b)
			response := f.idp.response(t, f.good(id, email), env.Clock.Now())
			if resp := f.acsPost(t, b, response, relay); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("first post answered %d %v; want 303", resp.StatusCode, body(t, resp))
			}
			again := newBrowser(env)
			refused(t, f.acsPost(t, again, response, relay), again, 401, "")
			// The same assertion answering a new request of the same browser.
			b2 := newBrowser(env)
			_, relay2 := f.begin(t, b2)
			refused(t, f.acsPost(t, b2, response, relay2), b2, 401, "")
			// The IdP signing the same assertion id again, for a new request.
			b3 := newBrowser(env)
			id3, relay3 := f.begin(t, b3)
			a := f.good(id3, email)
			a.id = firstID(t, response)
			refused(t, f.acsPost(t, b3, f.idp.response(t, a, env.Clock.Now()), relay3), b3, 401, "")
			if resp := f.acsPost(t, newBrowser(env), "", ""); resp.StatusCode != 401 {
				t.Errorf("an empty post answered %d; want 401", resp.StatusCode)
			}
		})
		t.Run("RelayState tampered", func(t *testing.T) {
			email := fresh()
			b := newBrowser(env)
			id, relay := f.begin(t, b)
			refused(t, f.acsPost(t, b, f.idp.response(t, f.good(id, email), now), relay+"x"), b, 401, email)
		})
		t.Run("another browser", func(t *testing.T) {
			email := fresh()
			b := newBrowser(env)
			id, relay := f.begin(t, b)
			victim := newBrowser(env)
			f.begin(t, victim) // a flow and cookie of its own
			refused(t, f.acsPost(t, victim, f.idp.response(t, f.good(id, email), now), relay), victim, 401, email)
		})
		t.Run("no browser cookie", func(t *testing.T) {
			email := fresh()
			id, relay := f.begin(t, newBrowser(env))
			refused(t, f.acsPost(t, newBrowser(env), f.idp.response(t, f.good(id, email), now), relay), nil, 401, email)
		})
		t.Run("IdP-initiated while off", func(t *testing.T) {
			email := fresh()
			a := f.good("", email)
			refused(t, f.acsPost(t, newBrowser(env), f.idp.response(t, a, now), ""), nil, 401, email)
			refused(t, f.acsPost(t, newBrowser(env), f.idp.response(t, a, now), "/console"), nil, 401, email)
		})
		t.Run("another workspace's connection", func(t *testing.T) {
			// Workspace B has its own IdP. A's IdP, signing everything
			// for B's connection, is not trusted there; nor is a response
			// meant for A posted to B's ACS.
			g := newSAMLFixture(t, env, nil)
			email := "boss-" + testenv.RandomHex(3) + "@" + g.domain
			b := newBrowser(env)
			id, relay := g.begin(t, b)
			forged := g.good(id, email)
			refused(t, g.acsPost(t, b, f.idp.response(t, forged, now), relay), b, 401, email)
			b = newBrowser(env)
			id, relay = g.begin(t, b)
			refused(t, g.acsPost(t, b, f.idp.response(t, f.good(id, "x-"+testenv.RandomHex(3)+"@"+f.domain), now), relay), b, 401, "")
			// A flow of A's connection posted to B's ACS.
			b = newBrowser(env)
			id, relay = f.begin(t, b)
			refused(t, g.acsPost(t, b, g.idp.response(t, g.good(id, email), now), relay), b, 401, email)
		})
		t.Run("an OIDC or unknown connection", func(t *testing.T) {
			resp := newBrowser(env).postForm(t, env.URL+"/v1/sso/saml/"+testenv.RandomHex(4)+"/acs", url.Values{"SAMLResponse": {"x"}}, nil)
			refused(t, resp, nil, 404, "")
		})
		refusedEntries := 0
		for _, e := range env.Audit(t, f.owner.Token, f.org, "limit=100") {
			if m := meta(e); e["action"] == "identity.sso.sign_in" && m["outcome"] == "refused" {
				refusedEntries++
			}
		}
		if refusedEntries < 17 {
			t.Errorf("refused sign-in entries = %d; want one per refused response after the flow", refusedEntries)
		}
		if !strings.Contains(env.Logs.String(), "saml response refused") {
			t.Error("no refusal was logged")
		}
	})
}

// TestSAMLIdPInitiated: with the switch on, an unsolicited response signs
// in and lands on "/"; the same assertion again is a replay, refused; a
// response naming a request we never made is refused.
func TestSAMLIdPInitiated(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, map[string]any{"allow_idp_initiated": true})
		email := "idp-" + testenv.RandomHex(3) + "@" + f.domain
		response := f.idp.response(t, f.good("", email), env.Clock.Now())
		b := newBrowser(env)
		resp := f.acsPost(t, b, response, "")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || sessionUser(t, env, b) == "" {
			t.Fatalf("unsolicited response answered %d to %q; want 303 to / with a session", resp.StatusCode, resp.Header.Get("Location"))
		}
		b = newBrowser(env)
		if resp := f.acsPost(t, b, response, ""); resp.StatusCode != 401 || sessionUser(t, env, b) != "" {
			t.Errorf("replayed unsolicited response answered %d; want 401 and no session", resp.StatusCode)
		}
		reasons := ""
		for _, e := range env.Audit(t, f.owner.Token, f.org, "") {
			if m := meta(e); e["action"] == "identity.sso.sign_in" {
				r, _ := m["reason"].(string)
				reasons += r + ";"
			}
		}
		if !strings.Contains(reasons, "used already") {
			t.Errorf("audit reasons %q; want the replay named", reasons)
		}
		if resp := f.acsPost(t, newBrowser(env), f.idp.response(t, f.good("_never-asked", "z-"+testenv.RandomHex(3)+"@"+f.domain), env.Clock.Now()), ""); resp.StatusCode != 401 {
			t.Errorf("unsolicited response with InResponseTo answered %d; want 401", resp.StatusCode)
		}
	})
}

// firstID is the ID of the Assertion in a base64 response.
func firstID(t *testing.T, response string) string {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(response)
	el := element(t, string(raw)).FindElement("./Assertion")
	if el == nil {
		t.Fatal("no Assertion in the response")
	}
	return el.SelectAttrValue("ID", "")
}

// TestSAMLReplayAcrossInstances: an assertion accepted by one instance is
// refused by another on the same database.
func TestSAMLReplayAcrossInstances(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, map[string]any{"allow_idp_initiated": true})
		second := env.Another(t)
		response := f.idp.response(t, f.good("", "two-"+testenv.RandomHex(3)+"@"+f.domain), env.Clock.Now())
		if resp := f.acsPost(t, newBrowser(env), response, ""); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("first instance answered %d %v; want 303", resp.StatusCode, body(t, resp))
		}
		b := newBrowser(second)
		resp := b.postForm(t, second.URL+"/v1/sso/saml/"+f.conn+"/acs", url.Values{"SAMLResponse": {response}}, nil)
		if resp.StatusCode != 401 || sessionUser(t, env, b) != "" {
			t.Errorf("second instance answered %d to the replay; want 401 and no session", resp.StatusCode)
		}
	})
}

// TestSAMLExistingAccount: an account with the asserted address is never
// linked silently (409 with a link_token, confirmed by a fresh password
// sign-in), as with OpenID Connect.
func TestSAMLExistingAccount(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		a := env.VerifiedAt(t, f.domain)
		resp, b := f.signIn(t, a.Email, nil)
		link, _ := body(t, resp)["link_token"].(string)
		if resp.StatusCode != http.StatusConflict || link == "" || sessionUser(t, env, b) != "" {
			t.Fatalf("ACS answered %d (session %q); want 409 with a link_token and no session", resp.StatusCode, sessionUser(t, env, b))
		}
		tok := env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200).Str("access_token")
		env.Call(t, "POST", "/v1/sso/link", tok, map[string]string{"link_token": link}).Want(t, 200)
		resp, b = f.signIn(t, a.Email, nil)
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != a.UserID {
			t.Errorf("sign-in after linking answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), a.UserID)
		}
	})
}
