package sso_test

import (
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSAMLConnection: a SAML connection is made from the IdP's metadata
// (uploaded or fetched), answers our side's values to paste, serves our
// metadata, and refuses OpenID Connect fields and missing metadata.
func TestSAMLConnection(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		r := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, nil).Want(t, 200)
		for path, want := range map[string]string{"connection.type": "saml", "connection.issuer": f.idp.entityID,
			"connection.saml.idp_entity_id": f.idp.entityID, "connection.saml.idp_sso_url": f.idp.URL + "/sso",
			"connection.saml.acs_url": env.URL + "/v1/sso/saml/" + f.conn + "/acs", "connection.saml.entity_id": env.URL + "/v1/sso/saml/" + f.conn + "/metadata",
			"connection.redirect_uri": f.acs} {
			if got := r.Str(path); got != want {
				t.Errorf("%s = %q; want %q", path, got, want)
			}
		}
		resp, err := env.Client.Get(f.entity)
		if err != nil {
			t.Fatal(err)
		}
		md, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(md), `entityID="`+f.entity+`"`) || !strings.Contains(string(md), `Location="`+f.acs+`"`) {
			t.Errorf("metadata answered %d:\n%s\nwant our entity id and ACS", resp.StatusCode, md)
		}
		// Another workspace's admin sees nothing of it.
		other, _ := env.Team(t)
		env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, other.Token, nil).Want(t, 404)
		// Fetched by URL (the IdP is on loopback: AllowPrivate here).
		d2 := testenv.Domain()
		env.VerifiedDomain(t, f.owner.Token, f.org, d2, "")
		r = env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, map[string]any{"type": "saml", "domains": []string{d2},
			"saml": map[string]any{"metadata_url": f.idp.URL + "/metadata", "allow_idp_initiated": true}}).Want(t, 200)
		if r.Str("connection.saml.idp_metadata_url") != f.idp.URL+"/metadata" || r.Str("connection.saml.idp_entity_id") != f.idp.entityID {
			t.Errorf("connection from metadata_url = %v", r)
		}
		id2 := r.Str("connection.id")
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+id2, f.owner.Token, map[string]any{"saml": map[string]any{"allow_idp_initiated": false}}).Want(t, 200)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+id2, f.owner.Token, map[string]any{"client_secret": "x"}).Want(t, 400)
		d3 := testenv.Domain()
		env.VerifiedDomain(t, f.owner.Token, f.org, d3, "")
		for name, b := range map[string]map[string]any{
			"no metadata":      {"type": "saml", "domains": []string{d3}},
			"oidc fields":      {"type": "saml", "domains": []string{d3}, "issuer": "https://x.test", "saml": map[string]any{"metadata_xml": f.idp.metadata()}},
			"not metadata":     {"type": "saml", "domains": []string{d3}, "saml": map[string]any{"metadata_xml": "<html/>"}},
			"no certificate":   {"type": "saml", "domains": []string{d3}, "saml": map[string]any{"metadata_xml": strings.Replace(f.idp.metadata(), "use=\"signing\"", "use=\"encryption\"", 1)}},
			"unknown type":     {"type": "ldap", "domains": []string{d3}},
			"metadata too big": {"type": "saml", "domains": []string{d3}, "saml": map[string]any{"metadata_xml": strings.Repeat(" ", 300<<10) + f.idp.metadata()}},
		} {
			t.Run(name, func(t *testing.T) {
				env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, b).Want(t, 400)
			})
		}
	})
}

// TestSAMLMetadataURLPrivate: a metadata URL on a private or loopback
// address, or over plain http, is refused (SSRF) on the default settings,
// even for a server whose certificate is trusted and which would answer.
func TestSAMLMetadataURLPrivate(t *testing.T) {
	idp := newSAMLIdP(t)
	var tlsIdP *httptest.Server
	tlsIdP = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.ReplaceAll(idp.metadata(), idp.URL, tlsIdP.URL))
	}))
	t.Cleanup(tlsIdP.Close)
	pool := x509.NewCertPool()
	pool.AddCert(tlsIdP.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: pool}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		d := testenv.Domain()
		env.VerifiedDomain(t, owner.Token, org, d, "")
		for _, u := range []string{tlsIdP.URL + "/metadata", idp.URL + "/metadata", "https://10.1.2.3/metadata", "https://[::1]/metadata",
			"https://169.254.169.254/latest/meta-data"} {
			t.Run(u, func(t *testing.T) {
				env.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Token, map[string]any{"type": "saml", "domains": []string{d},
					"saml": map[string]any{"metadata_url": u}}).Want(t, 400)
			})
		}
	})
}

// TestSAMLSignIn: a SP-initiated sign-in provisions the account as a
// member, opens a browser session and lands on next; a second one signs
// in to the same account; home-realm discovery starts it.
func TestSAMLSignIn(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		d := env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": "x@" + f.domain}).Want(t, 200)
		if d.Str("connection_id") != f.conn || !strings.HasSuffix(d.Str("start_url"), "/v1/sso/start?connection="+f.conn) {
			t.Errorf("discover = %v; want the SAML connection", d)
		}
		email := "ann-" + testenv.RandomHex(3) + "@" + f.domain
		resp, b := f.signIn(t, email, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console" {
			t.Fatalf("ACS answered %d to %q, %v; want 303 to /console\n%s", resp.StatusCode, resp.Header.Get("Location"), body(t, resp), env.Logs.String())
		}
		id := sessionUser(t, env, b)
		if id == "" || id != userByEmail(t, env, email) {
			t.Fatalf("session user = %q; want the new account of %s", id, email)
		}
		if role := env.Role(t, f.org, id); role != "member" {
			t.Errorf("role = %q; want member", role)
		}
		if _, ok := b.cookies["gatehouse_sso"]; ok {
			t.Error("the flow cookie was not cleared")
		}
		resp, b = f.signIn(t, email, func(a *assertion) { a.signAssertion, a.signResponse = false, true })
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) != id {
			t.Errorf("second sign-in (signed Response) answered %d for %q; want 303 for %s", resp.StatusCode, sessionUser(t, env, b), id)
		}
		n := 0
		for _, e := range env.Audit(t, f.owner.Token, f.org, "") {
			if m := meta(e); e["action"] == "identity.sso.sign_in" && m["outcome"] == "signed_in" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("signed_in sso.sign_in entries = %d; want 2", n)
		}
	})
}

// TestSAMLSkew: NotBefore a minute ahead (within the allowed skew) is
// accepted.
func TestSAMLSkew(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		now := env.Clock.Now()
		resp, _ := f.signIn(t, "sk-"+testenv.RandomHex(3)+"@"+f.domain, func(a *assertion) { a.notBefore = now.Add(time.Minute) })
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("ACS answered %d %v; want 303", resp.StatusCode, body(t, resp))
		}
	})
}
