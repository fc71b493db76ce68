package sso_test

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/russellhaering/gosaml2/types"
)

// spMetadata is our service provider's metadata at f's connection and
// its certificates (DER) by use.
func (f *samlFixture) spMetadata(t *testing.T) (*types.EntityDescriptor, map[string][][]byte) {
	t.Helper()
	raw, err := fetchBody(f.env, f.entity)
	if err != nil {
		t.Fatal(err)
	}
	return parseSPMetadata(t, raw)
}

// fetchBody GETs raw's body (safe off the test's goroutine).
func fetchBody(env *testenv.Env, raw string) ([]byte, error) {
	resp, err := env.Client.Get(raw)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// parseSPMetadata reads our metadata and its certificates by use.
func parseSPMetadata(t *testing.T, raw []byte) (*types.EntityDescriptor, map[string][][]byte) {
	t.Helper()
	var ed types.EntityDescriptor
	if err := xml.Unmarshal(raw, &ed); err != nil || ed.SPSSODescriptor == nil {
		t.Fatalf("metadata %s: %v", raw, err)
	}
	certs := map[string][][]byte{}
	for _, kd := range ed.SPSSODescriptor.KeyDescriptors {
		for _, c := range kd.KeyInfo.X509Data.X509Certificates {
			der, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				t.Fatal(err)
			}
			certs[kd.Use] = append(certs[kd.Use], der)
		}
	}
	return &ed, certs
}

const rsaSHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"

// verifyRedirect checks the signature of an HTTP-Redirect binding URL as
// an identity provider does (SAML bindings §3.4.4.1): RSA-SHA256 over
// SAMLRequest, RelayState and SigAlg as they were encoded in the query,
// against cert (DER).
func verifyRedirect(rawURL string, cert []byte) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	q := map[string]string{}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		q[k] = v
	}
	if alg, _ := url.QueryUnescape(q["SigAlg"]); alg != rsaSHA256 {
		return errors.New("SigAlg is " + alg)
	}
	input := "SAMLRequest=" + q["SAMLRequest"]
	if r, ok := q["RelayState"]; ok {
		input += "&RelayState=" + r
	}
	input += "&SigAlg=" + q["SigAlg"]
	s, _ := url.QueryUnescape(q["Signature"])
	sig, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	c, err := x509.ParseCertificate(cert)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(input))
	return rsa.VerifyPKCS1v15(c.PublicKey.(*rsa.PublicKey), crypto.SHA256, sum[:], sig)
}

// TestSAMLSignedAuthnRequest: our metadata publishes the connection's
// certificate for signing and for encryption and says requests are
// signed and assertions must be; the AuthnRequest sent to the IdP is
// signed as the HTTP-Redirect binding says and verifies against that
// certificate; altered, or checked against another certificate, it does
// not.
func TestSAMLSignedAuthnRequest(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		ed, certs := f.spMetadata(t)
		if !ed.SPSSODescriptor.AuthnRequestsSigned || !ed.SPSSODescriptor.WantAssertionsSigned {
			t.Errorf("AuthnRequestsSigned %v, WantAssertionsSigned %v; want both true", ed.SPSSODescriptor.AuthnRequestsSigned, ed.SPSSODescriptor.WantAssertionsSigned)
		}
		if len(certs["signing"]) != 1 || len(certs["encryption"]) != 1 || !bytes.Equal(certs["signing"][0], certs["encryption"][0]) {
			t.Fatalf("metadata certificates %d signing, %d encryption; want the connection's one for both", len(certs["signing"]), len(certs["encryption"]))
		}
		resp := newBrowser(env).get(t, env.URL+"/v1/sso/start?connection="+f.conn)
		loc := resp.Header.Get("Location")
		if err := verifyRedirect(loc, certs["signing"][0]); err != nil {
			t.Fatalf("the AuthnRequest's signature: %v; want it to verify\n%s", err, loc)
		}
		u, _ := url.Parse(loc)
		raw, _ := base64.StdEncoding.DecodeString(u.Query().Get("SAMLRequest"))
		x, _ := io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
		if !bytes.Contains(x, []byte("AuthnRequest")) || bytes.Contains(x, []byte("Signature")) {
			t.Errorf("the AuthnRequest %s; want no signature inside (the redirect binding signs the query)", x)
		}
		for name, bad := range map[string]string{
			"RelayState changed":  strings.Replace(loc, "RelayState=", "RelayState=x", 1),
			"SAMLRequest changed": strings.Replace(loc, "SAMLRequest=", "SAMLRequest=A", 1),
			"SigAlg dropped":      strings.Replace(loc, "SigAlg=", "SigAlgX=", 1),
		} {
			if err := verifyRedirect(bad, certs["signing"][0]); err == nil {
				t.Errorf("%s: the signature still verifies", name)
			}
		}
		if err := verifyRedirect(loc, newKeyCert(t).Certificate[0]); err == nil {
			t.Error("the signature verifies against another certificate")
		}
		// Another connection has a key of its own.
		g := newSAMLFixture(t, env, nil)
		if _, other := g.spMetadata(t); bytes.Equal(other["signing"][0], certs["signing"][0]) {
			t.Error("two connections share one key")
		}
	})
}

// TestSAMLEncryptedAssertion: an assertion encrypted to the connection's
// key (AES-GCM or AES-CBC, RSA-OAEP) signs in after every check a plain
// one passes; encrypted to another key, unsigned inside, with RSA
// PKCS#1 v1.5 key transport, or wrapped around or beside the signed one,
// it is refused.
func TestSAMLEncryptedAssertion(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		_, certs := f.spMetadata(t)
		ours, other := certs["encryption"][0], newKeyCert(t)
		fresh := func() string { return "e-" + testenv.RandomHex(3) + "@" + f.domain }
		for _, c := range []struct {
			name   string
			change func(*assertion)
		}{
			{"AES-GCM", func(a *assertion) { a.encryptTo = ours }},
			{"AES-CBC", func(a *assertion) { a.encryptTo, a.encryption.cbc = ours, true }},
			{"signed response around it", func(a *assertion) { a.encryptTo, a.signAssertion, a.signResponse = ours, false, true }},
		} {
			t.Run(c.name, func(t *testing.T) {
				email := fresh()
				resp, b := f.signIn(t, email, c.change)
				if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) == "" || sessionUser(t, env, b) != userByEmail(t, env, email) {
					t.Errorf("ACS answered %d %v; want 303 and a session for %s", resp.StatusCode, body(t, resp), email)
				}
			})
		}
		for _, c := range []struct {
			name   string
			change func(*assertion)
		}{
			{"encrypted to another key", func(a *assertion) { a.encryptTo = other.Certificate[0] }},
			{"unsigned inside", func(a *assertion) { a.encryptTo, a.signAssertion = ours, false }},
			{"signed by another key inside", func(a *assertion) { a.encryptTo, a.signer = ours, &other }},
			{"RSA PKCS#1 v1.5 key transport", func(a *assertion) { a.encryptTo, a.encryption.pkcs1v15 = ours, true }},
			{"unsigned encrypted assertion beside the signed one", func(a *assertion) { a.encryptTo, a.wrapUnsigned = ours, true }},
			{"signed assertion wrapped inside an unsigned one", func(a *assertion) { a.encryptTo, a.nestSigned = ours, true }},
			{"encrypted assertion inserted into the signed response", func(a *assertion) {
				a.encryptTo, a.signAssertion, a.signResponse, a.wrapAfterSigning = ours, false, true, true
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				email := fresh()
				resp, b := f.signIn(t, email, c.change)
				if resp.StatusCode != http.StatusUnauthorized || sessionUser(t, env, b) != "" || userByEmail(t, env, email) != "" {
					t.Errorf("ACS answered %d %v; want 401, no session, no account", resp.StatusCode, body(t, resp))
				}
			})
		}
	})
}

// TestSAMLKeyRotation: a staged key is published beside the current one
// and decrypts while the current one still signs; promoted, it alone
// signs, is published and decrypts. Each step is audited; a second stage
// or a promotion with nothing staged is 409; another workspace's admin
// sees nothing.
func TestSAMLKeyRotation(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		_, before := f.spMetadata(t)
		old := before["signing"][0]
		keys := "/v1/orgs/" + f.org + "/sso/" + f.conn + "/saml/keys"
		r := env.Call(t, "POST", keys, f.owner.Token, nil).Want(t, 200)
		if certs, _ := r.Get("connection.saml.sp_certificates").([]any); len(certs) != 2 || !certs[0].(map[string]any)["signing"].(bool) ||
			certs[1].(map[string]any)["signing"].(bool) || !strings.Contains(certs[1].(map[string]any)["certificate"].(string), "BEGIN CERTIFICATE") {
			t.Fatalf("sp_certificates after staging = %v; want the signing one, then a staged one", r.Get("connection.saml.sp_certificates"))
		}
		_, mid := f.spMetadata(t)
		if len(mid["signing"]) != 2 || len(mid["encryption"]) != 2 || !bytes.Equal(mid["signing"][0], old) {
			t.Fatalf("metadata after staging: %d signing, %d encryption certificates; want both keys for each, the current first", len(mid["signing"]), len(mid["encryption"]))
		}
		staged := mid["encryption"][1]
		start := func() string {
			return newBrowser(env).get(t, env.URL+"/v1/sso/start?connection="+f.conn).Header.Get("Location")
		}
		if err := verifyRedirect(start(), old); err != nil {
			t.Errorf("after staging, the AuthnRequest does not verify with the current key: %v", err)
		}
		encryptedTo := func(cert []byte) int {
			resp, _ := f.signIn(t, "r-"+testenv.RandomHex(3)+"@"+f.domain, func(a *assertion) { a.encryptTo = cert })
			return resp.StatusCode
		}
		if got := encryptedTo(old); got != http.StatusSeeOther {
			t.Errorf("encrypted to the current key while one is staged: %d; want 303", got)
		}
		if got := encryptedTo(staged); got != http.StatusSeeOther {
			t.Errorf("encrypted to the staged key: %d; want 303", got)
		}
		env.Call(t, "POST", keys, f.owner.Token, nil).Want(t, 409)
		other, _ := env.Team(t)
		env.Call(t, "POST", keys+"/promote", other.Token, nil).Want(t, 404)

		env.Call(t, "POST", keys+"/promote", f.owner.Token, nil).Want(t, 200)
		_, after := f.spMetadata(t)
		if len(after["signing"]) != 1 || len(after["encryption"]) != 1 || !bytes.Equal(after["signing"][0], staged) {
			t.Fatalf("metadata after promotion: %d signing, %d encryption certificates; want the promoted key alone", len(after["signing"]), len(after["encryption"]))
		}
		loc := start()
		if err := verifyRedirect(loc, staged); err != nil {
			t.Errorf("after promotion, the AuthnRequest does not verify with the promoted key: %v", err)
		}
		if verifyRedirect(loc, old) == nil {
			t.Error("after promotion, the AuthnRequest still verifies with the retired key")
		}
		if got := encryptedTo(old); got != http.StatusUnauthorized {
			t.Errorf("encrypted to the retired key: %d; want 401", got)
		}
		env.Call(t, "POST", keys+"/promote", f.owner.Token, nil).Want(t, 409)
		seen := map[string]bool{}
		for _, e := range env.Audit(t, f.owner.Token, f.org, "") {
			seen[e["action"].(string)] = true
		}
		if !seen["identity.sso.saml_key_staged"] || !seen["identity.sso.saml_key_promoted"] {
			t.Errorf("audit actions %v; want the staging and the promotion", seen)
		}
	})
}

// TestSAMLKeysMadeOnce: a connection made before it had keys of its own
// gets one on first use; two instances asked at once publish the same
// certificate, which then signs and decrypts on both.
func TestSAMLKeysMadeOnce(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newSAMLFixture(t, env, nil)
		env.Exec(t, `UPDATE sso_connections SET saml_sp_keys = '' WHERE id = $1`, f.conn)
		second := env.Another(t)
		g := samlFixture{env: second, entity: strings.Replace(f.entity, env.URL, second.URL, 1)}
		got := make(chan []byte, 2)
		for _, x := range []*samlFixture{f, &g} {
			go func() {
				raw, err := fetchBody(x.env, x.entity)
				if err != nil {
					t.Error(err)
				}
				got <- raw
			}()
		}
		_, ca := parseSPMetadata(t, <-got)
		_, cb := parseSPMetadata(t, <-got)
		a, b := ca["signing"], cb["signing"]
		if len(a) != 1 || len(b) != 1 || !bytes.Equal(a[0], b[0]) {
			t.Fatalf("the two instances publish %d and %d certificates, equal %v; want one, the same", len(a), len(b), len(a) == 1 && len(b) == 1 && bytes.Equal(a[0], b[0]))
		}
		if err := verifyRedirect(newBrowser(second).get(t, second.URL+"/v1/sso/start?connection="+f.conn).Header.Get("Location"), a[0]); err != nil {
			t.Errorf("the other instance's AuthnRequest: %v", err)
		}
		resp, _ := f.signIn(t, "m-"+testenv.RandomHex(3)+"@"+f.domain, func(as *assertion) { as.encryptTo = a[0] })
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("encrypted to the published certificate: %d; want 303", resp.StatusCode)
		}
	})
}
