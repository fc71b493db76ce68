package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// spCerts are the sha256 fingerprints and PEM of SAML connection conn's
// own certificates, as the API answers them (the signing one first).
func spCerts(t *testing.T, env *testenv.Env, token, org, conn string) (sums, pems []string) {
	t.Helper()
	res := env.Call(t, "GET", "/v1/orgs/"+org+"/sso/"+conn, token, nil).Want(t, 200)
	certs, _ := res.Get("connection.saml.sp_certificates").([]any)
	for _, c := range certs {
		m := c.(map[string]any)
		sums, pems = append(sums, m["sha256"].(string)), append(pems, m["certificate"].(string))
	}
	return sums, pems
}

// TestConsoleSSOSAMLKeys is the rotation of a SAML connection's own key
// on its page: the current certificate with its fingerprint and a
// download, our metadata to download; an admin adds a next key (both
// shown, the next one downloadable, a second one refused on the page),
// then makes it current after a confirmation step; each step audited.
// A member, a cross-site post, another workspace's admin and a stale
// sign-in change nothing; the section reads in German.
func TestConsoleSSOSAMLKeys(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, admin, member := env.Register(t), env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Acme", [2]string{owner.UserID, "owner"}, [2]string{admin.UserID, "admin"}, [2]string{member.UserID, "member"})
		domain := testenv.Domain()
		env.VerifiedDomain(t, owner.Access, org, domain, "")
		ab, mb := signedIn(t, env, admin), signedIn(t, env, member)
		res := ab.Post(t, "/workspaces/"+org+"/sso/new/saml", url.Values{"name": {"Okta"}, "metadata_xml": {idpMetadata(t, "https://idp.example")},
			"domains": {domain}, "default_role": {"member"}})
		m := connPathRE.FindStringSubmatch(res.Location())
		if m == nil {
			t.Fatalf("create answered %d to %q", res.Status, res.Location())
		}
		connPage, conn := m[1], m[2]
		sums, pems := spCerts(t, env, owner.Access, org, conn)
		if len(sums) != 1 {
			t.Fatalf("a new connection has %d certificates; want 1", len(sums))
		}
		wantPage(t, "keys shown", ab.Get(t, connPage), 200, `id="sp-keys-title"`, "Current key", sums[0],
			`href="`+env.URL+`/v1/sso/saml/`+conn+`/metadata" download=`, `href="`+connPage+`?certificate=current" download`,
			`name="key" value="stage"`, "Add a next key")
		dl := ab.Get(t, connPage+"?certificate=current")
		if dl.Status != 200 || dl.Body != pems[0] || dl.Header.Get("Content-Type") != "application/x-pem-file" ||
			!strings.HasPrefix(dl.Header.Get("Content-Disposition"), "attachment;") {
			t.Fatalf("the current certificate's download: %d %q %q\n%s", dl.Status, dl.Header.Get("Content-Type"), dl.Header.Get("Content-Disposition"), dl.Body)
		}
		wantPage(t, "no next key to download", ab.Get(t, connPage+"?certificate=next"), 404)

		stage := url.Values{"key": {"stage"}}
		unchanged := func(what string, want int) {
			t.Helper()
			if s, _ := spCerts(t, env, owner.Access, org, conn); len(s) != want || s[0] != sums[0] {
				t.Fatalf("after %s the connection's certificates are %v; want %d, the first %s", what, s, want, sums[0])
			}
		}
		wantPage(t, "member stage", mb.Post(t, connPage, stage), 403)
		wantPage(t, "member download", mb.Get(t, connPage+"?certificate=current"), 403)
		wantPage(t, "cross-site stage", ab.PostCrossSite(t, connPage, stage), 403)
		otherOrg := env.CreateOrg(t, admin, "Other")
		wantPage(t, "another workspace's connection", ab.Post(t, "/workspaces/"+otherOrg+"/sso/"+conn, stage), 404)
		wantPage(t, "another workspace's download", ab.Get(t, "/workspaces/"+otherOrg+"/sso/"+conn+"?certificate=current"), 404)
		unchanged("refused stages", 1)

		wantRedirect(t, "stage", ab.Post(t, connPage, stage), connPage+"?done=sso-key-stage")
		sums, pems = spCerts(t, env, owner.Access, org, conn)
		if len(sums) != 2 {
			t.Fatalf("after staging the connection has %d certificates; want 2", len(sums))
		}
		wantPage(t, "staged", ab.Get(t, connPage+"?done=sso-key-stage"), 200, "A next key was added.", "Current key", sums[0], "Next key", sums[1],
			"Published, not signing yet", `name="key" value="promote"`, "Make the next key current")
		if dl := ab.Get(t, connPage+"?certificate=next"); dl.Status != 200 || dl.Body != pems[1] {
			t.Fatalf("the next certificate's download: %d\n%s", dl.Status, dl.Body)
		}
		wantPage(t, "stage twice", ab.Post(t, connPage, stage), http.StatusConflict, "A key is staged already", sums[1])
		if n := len(env.StoredAudit(t, org, "identity.sso.saml_key_staged")); n != 1 {
			t.Fatalf("%d staging audit entries; want 1", n)
		}

		de := speaking(signedIn(t, env, admin), "de")
		res = de.Get(t, connPage+"?done=sso-key-stage")
		wantGerman(t, "German keys", res)
		wantPage(t, "German notice", res, 200, "Ein nächster Schlüssel wurde hinzugefügt.", "Nächster Schlüssel")
		res = de.Post(t, connPage, url.Values{"key": {"promote"}})
		wantGerman(t, "German confirmation", res)
		wantPage(t, "German confirmation", res, 200, "Den nächsten Schlüssel von Okta zum aktuellen machen?")

		promote := url.Values{"key": {"promote"}, "confirm": {"yes"}}
		wantPage(t, "member promote", mb.Post(t, connPage, promote), 403)
		wantPage(t, "cross-site promote", ab.PostCrossSite(t, connPage, promote), 403)
		wantPage(t, "another workspace's promote", ab.Post(t, "/workspaces/"+otherOrg+"/sso/"+conn, promote), 404)
		wantPage(t, "promote unconfirmed", ab.Post(t, connPage, url.Values{"key": {"promote"}}), 200, "Make the next key of Okta current?",
			`name="confirm" value="yes"`, `name="key" value="promote"`)
		unchanged("refused or unconfirmed promotions", 2)

		wantRedirect(t, "promote", ab.Post(t, connPage, promote), connPage+"?done=sso-key-promote")
		after, _ := spCerts(t, env, owner.Access, org, conn)
		if len(after) != 1 || after[0] != sums[1] {
			t.Fatalf("after promotion the certificates are %v; want the next one alone, %s", after, sums[1])
		}
		res = ab.Get(t, connPage+"?done=sso-key-promote")
		wantPage(t, "promoted", res, 200, "The next key is current", after[0], "Add a next key")
		if strings.Contains(res.Body, sums[0]) {
			t.Fatalf("the retired certificate is still shown")
		}
		if es := env.StoredAudit(t, org, "identity.sso.saml_key_promoted"); len(es) != 1 || es[0]["actor_id"] != admin.UserID || !strings.Contains(es[0]["meta"], sums[1]) {
			t.Fatalf("promotion audit entries = %v; want one by the admin naming %s", es, sums[1])
		}

		// A stale sign-in is asked to sign in again; nothing changes.
		env.Clock.Advance(identity.ReauthWindow + 1)
		wantPage(t, "stale stage", ab.Post(t, connPage, stage), http.StatusForbidden, "<h1>Sign in again</h1>")
		if body := ab.Get(t, connPage).Body; strings.Contains(body, "Next key") {
			t.Fatalf("a stale sign-in staged a key")
		}
	})
}
