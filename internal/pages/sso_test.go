package pages_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// ssoOpts let the test identity providers run on loopback.
var ssoOpts = testenv.Options{AllowPrivate: true}

// idpMetadata is the SAML metadata of an identity provider at base, with
// a fresh self-signed signing certificate.
func idpMetadata(t *testing.T, base string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "test idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="` + base + `/entity">
<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>
<ds:X509Certificate>` + base64.StdEncoding.EncodeToString(der) + `</ds:X509Certificate>
</ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="` + base + `/sso"/>
</md:IDPSSODescriptor>
</md:EntityDescriptor>`
}

// ssoConnCount counts org's connections.
func ssoConnCount(t *testing.T, env *testenv.Env, org string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM sso_connections WHERE org_id = $1`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var connPathRE = regexp.MustCompile(`^(/workspaces/[^/]+/sso/([^/?]+))\?done=sso-created$`)

// TestConsoleSSO is the SSO pages with OpenID Connect: an admin is offered
// them, sees the redirect URI before adding, is told next to each field
// what is wrong, adds a connection and lands on its page with the values
// to paste, edits it (the secret is kept unless typed, never shown) and
// deletes it after a confirmation step; a member and a cross-site post
// change nothing.
func TestConsoleSSO(t *testing.T) {
	idp := ssotest.New(t)
	testenv.RunWith(t, ssoOpts, func(t *testing.T, env *testenv.Env) {
		owner, admin, member := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Acme", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "")
		base := "/workspaces/" + org + "/sso"
		ab, mb := signedIn(t, env, admin), signedIn(t, env, member)

		if !strings.Contains(ab.Get(t, "/workspaces/"+org).Body, `href="`+base+`"`) {
			t.Errorf("the admin is not offered the SSO page")
		}
		if strings.Contains(mb.Get(t, "/workspaces/"+org).Body, `href="`+base+`"`) {
			t.Errorf("a member is offered the SSO page")
		}
		wantPage(t, "list", ab.Get(t, base), 200, "This workspace has no SSO connection.", `href="`+base+`/new/oidc"`, `href="`+base+`/new/saml"`)
		wantPage(t, "new oidc", ab.Get(t, base+"/new/oidc"), 200, `<code id="redirect-uri">`+env.URL+`/v1/sso/callback</code>`,
			`value="`+domain+`" checked`)
		form := url.Values{"name": {"Acme IdP"}, "issuer": {idp.URL}, "client_id": {ssotest.Client}, "client_secret": {ssotest.Secret},
			"scopes": {"openid email profile"}, "domains": {domain}, "default_role": {"member"}}
		bad := func(what, field, value, errID string) {
			t.Helper()
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			f[field] = []string{value}
			res := ab.Post(t, base+"/new/oidc", f)
			wantPage(t, what, res, 400, `id="`+errID+`"`)
			if strings.Contains(res.Body, ssotest.Secret) {
				t.Errorf("%s: the client secret is shown again", what)
			}
		}
		bad("no issuer", "issuer", "", "issuer-error")
		bad("http issuer elsewhere", "issuer", "ftp://idp.example", "issuer-error")
		bad("no secret", "client_secret", "", "client_secret-error")
		bad("no domains", "domains", "", "domains-error")
		bad("a domain not verified", "domains", "other-"+domain, "domains-error")
		bad("owner role", "default_role", "owner", "default_role-error")
		if n := ssoConnCount(t, env, org); n != 0 {
			t.Fatalf("refused forms made %d connections", n)
		}

		res := ab.Post(t, base+"/new/oidc", form)
		m := connPathRE.FindStringSubmatch(res.Location())
		if res.Status != http.StatusSeeOther || m == nil {
			t.Fatalf("create answered %d to %q; want 303 to the connection's page", res.Status, res.Location())
		}
		connPage, conn := m[1], m[2]
		res = ab.Get(t, res.Location())
		wantPage(t, "created", res, 200, "The connection Acme IdP was added.", `<code id="redirect-uri">`+env.URL+`/v1/sso/callback</code>`,
			`value="`+idp.URL+`"`, `value="`+domain+`" checked`)
		if strings.Contains(res.Body, ssotest.Secret) {
			t.Fatalf("the connection's page shows the client secret")
		}
		wantPage(t, "listed", ab.Get(t, base), 200, `href="`+connPage+`"`, "Acme IdP", "OpenID Connect")
		wantPage(t, "audit", ab.Get(t, "/workspaces/"+org+"/audit?action=sso.connection_created"), 200, "sso.connection_created")

		edit := url.Values{"name": {"Acme SSO"}, "issuer": {idp.URL}, "client_id": {ssotest.Client}, "client_secret": {""}, "scopes": {"openid email"},
			"domains": {domain}, "default_role": {"admin"}, "enforce": {"on"}}
		wantRedirect(t, "edit", ab.Post(t, connPage, edit), connPage+"?done=sso-updated")
		got := env.Call(t, "GET", "/v1/orgs/"+org+"/sso/"+conn, owner.Access, nil).Want(t, 200)
		if got.Str("connection.name") != "Acme SSO" || got.Str("connection.default_role") != "admin" || got.Get("connection.enforce") != true {
			t.Fatalf("after the edit the connection is %v", got.JSON())
		}
		// Attribute mapping: groups per team of this workspace; another
		// workspace's team is refused next to the mapping.
		eng := env.Call(t, "POST", "/v1/orgs/"+org+"/teams", owner.Access, map[string]any{"name": "Engineering"}).Want(t, 200).Str("team.id")
		wantPage(t, "mapping fields", ab.Get(t, connPage), 200, `id="groups_attribute"`, `id="group_`+eng+`"`, "Groups for the team Engineering")
		otherOwner, otherOrg := env.Team(t)
		foreign := env.Call(t, "POST", "/v1/orgs/"+otherOrg+"/teams", otherOwner.Token, map[string]any{"name": "Elsewhere"}).Want(t, 200).Str("team.id")
		mapped := url.Values{"name_attribute": {"display_name"}, "groups_attribute": {"groups"}, "group_" + eng: {"eng, platform"}}
		for k, v := range edit {
			mapped[k] = v
		}
		mapped.Set("group_"+foreign, "eng")
		wantPage(t, "another workspace's team", ab.Post(t, connPage, mapped), 400, `id="group_teams-error"`, "is not a team of this workspace")
		mapped.Del("group_" + foreign)
		wantRedirect(t, "mapping", ab.Post(t, connPage, mapped), connPage+"?done=sso-updated")
		mr := env.Call(t, "GET", "/v1/orgs/"+org+"/sso/"+conn, owner.Access, nil).Want(t, 200)
		if gts, _ := mr.Get("connection.attribute_mapping.group_teams").([]any); len(gts) != 2 || mr.Str("connection.attribute_mapping.name") != "display_name" {
			t.Fatalf("mapping saved = %v", mr.JSON())
		}
		wantPage(t, "mapping shown", ab.Get(t, connPage), 200, `value="eng, platform"`)
		// The secret was kept: a sign-in through the connection works.
		who := "p-" + testenv.RandomHex(3) + "@" + domain
		idp.SetClaims(map[string]any{"sub": "s-" + testenv.RandomHex(3), "email": who, "email_verified": true, "name": "Pat"})
		pb := env.NewBrowser(t)
		res = pb.Get(t, pb.Get(t, "/v1/sso/start?connection="+conn+"&next=/").Location())
		wantRedirect(t, "sign in through it", pb.Get(t, res.Location()), "/")

		wantPage(t, "member list", mb.Get(t, base), 403)
		wantPage(t, "member conn", mb.Get(t, connPage), 403)
		wantPage(t, "member create", mb.Post(t, base+"/new/oidc", form), 403)
		wantPage(t, "member edit", mb.Post(t, connPage, edit), 403)
		wantPage(t, "member delete", mb.Post(t, connPage+"/delete", url.Values{"confirm": {"yes"}}), 403)
		wantPage(t, "cross-site create", ab.PostCrossSite(t, base+"/new/oidc", form), 403)
		wantPage(t, "cross-site delete", ab.PostCrossSite(t, connPage+"/delete", url.Values{"confirm": {"yes"}}), 403)
		wantPage(t, "another org's connection", ab.Get(t, "/workspaces/"+env.CreateOrg(t, admin, "Other")+"/sso/"+conn), 404)
		wantPage(t, "delete unconfirmed", ab.Post(t, connPage+"/delete", nil), 200, "Delete the connection Acme SSO?", `name="confirm" value="yes"`)
		if n := ssoConnCount(t, env, org); n != 1 {
			t.Fatalf("after refused changes the workspace has %d connections; want 1", n)
		}
		wantRedirect(t, "delete", ab.Post(t, connPage+"/delete", url.Values{"confirm": {"yes"}}), base+"?done=sso-deleted")
		wantPage(t, "deleted", ab.Get(t, base+"?done=sso-deleted"), 200, "The connection Acme SSO was deleted.", "This workspace has no SSO connection.")
	})
}

// TestConsoleSSOSAML is the SAML set-up: metadata that does not parse and
// a metadata URL that is not https are told next to their fields; pasted
// metadata makes a connection whose page shows our entity id, ACS URL and
// metadata URL, which serves that entity id.
func TestConsoleSSOSAML(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Token, org, domain, "")
		base := "/workspaces/" + org + "/sso"
		ob := signedIn(t, env, owner)
		wantPage(t, "new saml", ob.Get(t, base+"/new/saml"), 200, `id="metadata_url"`, `id="metadata_xml"`, "https://example.invalid")
		form := url.Values{"name": {"Okta"}, "metadata_xml": {"<nope/>"}, "domains": {domain}, "default_role": {"member"}}
		wantPage(t, "bad xml", ob.Post(t, base+"/new/saml", form), 400, `id="metadata_xml-error"`, "&lt;nope/&gt;")
		wantPage(t, "bad url", ob.Post(t, base+"/new/saml", url.Values{"name": {"Okta"}, "metadata_url": {"ftp://idp.example/md"},
			"domains": {domain}, "default_role": {"member"}}), 400, `id="metadata_url-error"`, "Metadata URL must be")
		form.Set("metadata_xml", idpMetadata(t, "https://idp.example"))
		res := ob.Post(t, base+"/new/saml", form)
		m := connPathRE.FindStringSubmatch(res.Location())
		if m == nil {
			t.Fatalf("create answered %d to %q:\n%.2000s", res.Status, res.Location(), res.Body)
		}
		entity := env.URL + "/v1/sso/saml/" + m[2] + "/metadata"
		wantPage(t, "created", ob.Get(t, res.Location()), 200, `<code id="sp-entity-id">`+entity+`</code>`,
			`<code id="sp-acs-url">`+env.URL+"/v1/sso/saml/"+m[2]+`/acs</code>`, `<code id="sp-metadata-url">`+entity+`</code>`,
			"https://idp.example/entity", "https://idp.example/sso")
		if md := env.NewBrowser(t).Get(t, entity); md.Status != 200 || !strings.Contains(md.Body, `entityID="`+entity+`"`) {
			t.Fatalf("our metadata answered %d:\n%.500s", md.Status, md.Body)
		}
		wantRedirect(t, "switch on idp-initiated", ob.Post(t, m[1], url.Values{"name": {"Okta"}, "domains": {domain}, "default_role": {"member"},
			"allow_idp_initiated": {"on"}}), m[1]+"?done=sso-updated")
		if env.Call(t, "GET", "/v1/orgs/"+org+"/sso/"+m[2], owner.Token, nil).Want(t, 200).Get("connection.saml.allow_idp_initiated") != true {
			t.Fatalf("the IdP-initiated switch was not saved")
		}
	})
}

// TestConsoleSSOSignInAgain: adding a connection after the sign-in grew
// old answers with the sign-in form; the kept form holds no client secret
// (typed again on the card) and, once sent, adds the connection.
func TestConsoleSSOSignInAgain(t *testing.T) {
	idp := ssotest.New(t)
	testenv.RunWith(t, ssoOpts, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Token, org, domain, "")
		ob := signedIn(t, env, owner)
		env.Clock.Advance(identity.ReauthWindow + 1)
		path := "/workspaces/" + org + "/sso/new/oidc"
		form := url.Values{"name": {"Acme IdP"}, "issuer": {idp.URL}, "client_id": {ssotest.Client}, "client_secret": {ssotest.Secret},
			"scopes": {"openid email"}, "domains": {domain}, "default_role": {"member"}}
		res := ob.Post(t, path, form)
		wantPage(t, "stale", res, http.StatusForbidden, "<h1>Sign in again</h1>", `name="next" value="`+path+`"`)
		for _, ck := range ob.Client.Jar.Cookies(mustURL(t, env.URL+path)) {
			if strings.Contains(ck.Value, ssotest.Secret) || strings.Contains(ck.Value, "client_secret") {
				t.Fatalf("cookie %s holds the client secret or the form in the clear", ck.Name)
			}
		}
		wantRedirect(t, "sign in again", ob.Post(t, "/signin", url.Values{"email": {owner.Email}, "password": {owner.Password}, "next": {path}}), path)
		res = ob.Get(t, path)
		wantPage(t, "kept", res, 200, "Finish what you started", `id="resume-client_secret"`, `name="issuer" value="`+idp.URL+`"`)
		if strings.Contains(res.Body, ssotest.Secret) {
			t.Fatalf("the client secret came back on the page")
		}
		if n := ssoConnCount(t, env, org); n != 0 {
			t.Fatalf("a stale sign-in added %d connections", n)
		}
		if res := ob.Post(t, path, form); !connPathRE.MatchString(res.Location()) {
			t.Fatalf("the form sent again answered %d to %q", res.Status, res.Location())
		}
	})
}
