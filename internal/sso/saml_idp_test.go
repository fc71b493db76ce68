package sso_test

import (
	"bytes"
	"compress/flate"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/gatehouse/gatehouse/internal/testenv"
	dsig "github.com/russellhaering/goxmldsig"
)

// samlIdP is a SAML identity provider for the tests: real RSA keys and a
// self-signed certificate, responses and assertions signed with goxmldsig.
// It serves its metadata (GET /metadata) and a sign-on endpoint (GET /sso)
// that reads the AuthnRequest and answers what a browser would post back,
// as JSON.
type samlIdP struct {
	*httptest.Server
	entityID string
	cert     tls.Certificate
	// down makes GET /metadata fail.
	down atomic.Bool
}

// newKeyCert is a fresh RSA key and a self-signed certificate valid around now.
func newKeyCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "test idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func newSAMLIdP(t *testing.T) *samlIdP {
	t.Helper()
	p := &samlIdP{cert: newKeyCert(t)}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	p.entityID = p.URL + "/entity"
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/samlmetadata+xml")
		io.WriteString(w, p.metadata())
	})
	mux.HandleFunc("GET /sso", func(w http.ResponseWriter, r *http.Request) {
		raw, err := base64.StdEncoding.DecodeString(r.URL.Query().Get("SAMLRequest"))
		if err != nil {
			http.Error(w, "bad SAMLRequest", 400)
			return
		}
		x, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
		if err != nil {
			http.Error(w, "bad SAMLRequest", 400)
			return
		}
		var req struct {
			ID  string `xml:"ID,attr"`
			ACS string `xml:"AssertionConsumerServiceURL,attr"`
		}
		if err := xml.Unmarshal(x, &req); err != nil || req.ID == "" {
			http.Error(w, "bad AuthnRequest", 400)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"request_id": req.ID, "acs": req.ACS, "relay": r.URL.Query().Get("RelayState")})
	})
	return p
}

// metadata is the IdP's metadata document.
func (p *samlIdP) metadata() string {
	return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="` + p.entityID + `">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>
      <ds:X509Certificate>` + base64.StdEncoding.EncodeToString(p.cert.Certificate[0]) + `</ds:X509Certificate>
    </ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="` + p.URL + `/sso-post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="` + p.URL + `/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`
}

// assertion describes the response the IdP signs; zero fields take the
// values a correct response has.
type assertion struct {
	requestID    string // InResponseTo; "" for an unsolicited response
	acs          string // Destination and Recipient
	audience     string
	email        string
	nameIDXML    string // raw NameID content, when set (comments)
	destination  *string
	recipient    *string
	noAudience   bool
	id           string
	notBefore    time.Time
	notOnOrAfter time.Time
	// signResponse and signAssertion choose what is signed.
	signResponse, signAssertion bool
	// signer signs instead of the IdP's key (a key the connection does not know).
	signer *tls.Certificate
	// wrapAfterSigning inserts a second, unsigned assertion into the
	// signed Response; wrapUnsigned puts one before the signed Assertion
	// of an unsigned Response (XML signature wrapping).
	wrapAfterSigning, wrapUnsigned bool
	// attributes are more saml:Attribute elements, as XML.
	attributes string
	// encryptTo, a certificate (DER), encrypts the assertion to its key
	// (and the wrapping assertions with it); encryption chooses how.
	encryptTo  []byte
	encryption encryption
	// nestSigned encrypts an unsigned assertion that carries the signed
	// one inside it (signature wrapping within the encrypted content).
	nestSigned bool
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

const samlTime = "2006-01-02T15:04:05Z"

// assertionXML is one Assertion element as text.
func (p *samlIdP) assertionXML(a assertion, now time.Time, email string) string {
	recipient := a.acs
	if a.recipient != nil {
		recipient = *a.recipient
	}
	irt := ""
	if a.requestID != "" {
		irt = ` InResponseTo="` + esc(a.requestID) + `"`
	}
	nameID := esc(email)
	if a.nameIDXML != "" {
		nameID = a.nameIDXML
	}
	audience := `<saml:AudienceRestriction><saml:Audience>` + esc(a.audience) + `</saml:Audience></saml:AudienceRestriction>`
	if a.noAudience {
		audience = ""
	}
	return fmt.Sprintf(`<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="%s" Version="2.0" IssueInstant="%s">`+
		`<saml:Issuer>%s</saml:Issuer>`+
		`<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">%s</saml:NameID>`+
		`<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData%s NotOnOrAfter="%s" Recipient="%s"/></saml:SubjectConfirmation></saml:Subject>`+
		`<saml:Conditions NotBefore="%s" NotOnOrAfter="%s">%s</saml:Conditions>`+
		`<saml:AuthnStatement AuthnInstant="%s" SessionIndex="s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`+
		`<saml:AttributeStatement><saml:Attribute Name="displayName"><saml:AttributeValue>Test Person</saml:AttributeValue></saml:Attribute>%s</saml:AttributeStatement>`+
		`</saml:Assertion>`,
		esc(a.id), now.Format(samlTime), esc(p.entityID), nameID, irt, now.Add(5*time.Minute).Format(samlTime), esc(recipient),
		a.notBefore.Format(samlTime), a.notOnOrAfter.Format(samlTime), audience, now.Format(samlTime), a.attributes)
}

// element parses one element.
func element(t *testing.T, s string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(s); err != nil {
		t.Fatalf("test idp xml: %v\n%s", err, s)
	}
	return doc.Root()
}

// sign signs el enveloped with c.
func sign(t *testing.T, c tls.Certificate, el *etree.Element) *etree.Element {
	t.Helper()
	ctx := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(c))
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	signed, err := ctx.SignEnveloped(el)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// response is a's Response, base64 as the HTTP-POST binding sends it.
func (p *samlIdP) response(t *testing.T, a assertion, now time.Time) string {
	t.Helper()
	if a.id == "" {
		a.id = "_a" + testenv.RandomHex(8)
	}
	if a.notBefore.IsZero() {
		a.notBefore = now.Add(-time.Minute)
	}
	if a.notOnOrAfter.IsZero() {
		a.notOnOrAfter = now.Add(5 * time.Minute)
	}
	signer := p.cert
	if a.signer != nil {
		signer = *a.signer
	}
	dest := a.acs
	if a.destination != nil {
		dest = *a.destination
	}
	irt := ""
	if a.requestID != "" {
		irt = ` InResponseTo="` + esc(a.requestID) + `"`
	}
	destAttr := ""
	if dest != "" {
		destAttr = ` Destination="` + esc(dest) + `"`
	}
	resp := element(t, fmt.Sprintf(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r%s" Version="2.0" IssueInstant="%s"%s%s>`+
		`<saml:Issuer>%s</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:Response>`,
		testenv.RandomHex(8), now.Format(samlTime), destAttr, irt, esc(p.entityID)))
	as := element(t, p.assertionXML(a, now, a.email))
	if a.signAssertion {
		as = sign(t, signer, as)
	}
	plainEvil := func() *etree.Element {
		e := a
		e.id, e.nameIDXML = "_evil"+testenv.RandomHex(4), ""
		return element(t, p.assertionXML(e, now, "boss@"+strings.SplitN(a.email, "@", 2)[1]))
	}
	evil := func() *etree.Element {
		if a.encryptTo != nil {
			return encryptAssertion(t, plainEvil(), a.encryptTo, a.encryption)
		}
		return plainEvil()
	}
	if a.nestSigned {
		outer := plainEvil()
		outer.AddChild(as)
		as = outer
	}
	if a.encryptTo != nil {
		as = encryptAssertion(t, as, a.encryptTo, a.encryption)
	}
	if a.wrapUnsigned {
		resp.AddChild(evil())
	}
	resp.AddChild(as)
	if a.signResponse {
		resp = sign(t, signer, resp)
	}
	if a.wrapAfterSigning {
		resp.InsertChildAt(1, evil())
	}
	doc := etree.NewDocument()
	doc.SetRoot(resp)
	out, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(out)
}

// postForm posts form to raw from b with extra headers, keeping cookies as
// get does; the body is closed when the test ends.
func (b *browser) postForm(t *testing.T, raw string, form url.Values, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", raw, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return b.do(t, req)
}

// samlFixture is a team org with a verified domain and a SAML connection
// to a test IdP.
type samlFixture struct {
	env    *testenv.Env
	idp    *samlIdP
	owner  *testenv.Account
	org    string
	domain string
	conn   string
	acs    string
	entity string
}

func newSAMLFixture(t *testing.T, env *testenv.Env, extra map[string]any) *samlFixture {
	t.Helper()
	f := &samlFixture{env: env, idp: newSAMLIdP(t), domain: testenv.Domain()}
	f.owner, f.org = env.Team(t)
	env.VerifiedDomain(t, f.owner.Token, f.org, f.domain, "")
	saml := map[string]any{"metadata_xml": f.idp.metadata()}
	for k, v := range extra {
		saml[k] = v
	}
	if u, ok := extra["metadata_url"].(string); ok {
		delete(saml, "metadata_xml")
		saml["metadata_url"] = strings.ReplaceAll(u, "{idp}", f.idp.URL)
	}
	r := env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, map[string]any{"type": "saml", "name": "Acme SAML",
		"domains": []string{f.domain}, "saml": saml}).Want(t, 200)
	f.conn, f.acs, f.entity = r.Str("connection.id"), r.Str("connection.saml.acs_url"), r.Str("connection.saml.entity_id")
	return f
}

// begin starts a sign-in through f's connection in b and asks the IdP:
// the AuthnRequest's id and the RelayState.
func (f *samlFixture) begin(t *testing.T, b *browser) (requestID, relay string) {
	t.Helper()
	resp := b.get(t, f.env.URL+"/v1/sso/start?connection="+f.conn+"&next=/console")
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("start answered %d; want 302", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, f.idp.URL+"/sso?") {
		t.Fatalf("start sent the browser to %q; want the IdP's sign-on URL", loc)
	}
	resp = b.get(t, loc)
	var m map[string]string
	json.NewDecoder(resp.Body).Decode(&m)
	if m["acs"] != f.acs || m["request_id"] == "" || m["relay"] == "" {
		t.Fatalf("the AuthnRequest = %v; want our ACS %s, an id and a RelayState", m, f.acs)
	}
	return m["request_id"], m["relay"]
}

// good is a correct assertion for email answering requestID.
func (f *samlFixture) good(requestID, email string) assertion {
	return assertion{requestID: requestID, acs: f.acs, audience: f.entity, email: email, signAssertion: true}
}

// acsPost posts a response and RelayState to f's ACS from b.
func (f *samlFixture) acsPost(t *testing.T, b *browser, response, relay string) *http.Response {
	t.Helper()
	return b.postForm(t, f.acs, url.Values{"SAMLResponse": {response}, "RelayState": {relay}}, nil)
}

// signIn runs a whole SP-initiated sign-in in a new browser, with change
// applied to the correct assertion.
func (f *samlFixture) signIn(t *testing.T, email string, change func(*assertion)) (*http.Response, *browser) {
	t.Helper()
	b := newBrowser(f.env)
	id, relay := f.begin(t, b)
	a := f.good(id, email)
	if change != nil {
		change(&a)
	}
	return f.acsPost(t, b, f.idp.response(t, a, f.env.Clock.Now()), relay), b
}

// encryption is how the test IdP encrypts an assertion: AES-256-GCM and
// RSA-OAEP (SHA-1 digest, as IdPs commonly send) unless set.
type encryption struct {
	cbc      bool // AES-256-CBC instead of GCM
	pkcs1v15 bool // RSA PKCS#1 v1.5 key transport instead of OAEP
}

// encryptAssertion is el as an EncryptedAssertion to the key of cert
// (DER), as XML Encryption 1.1 describes it: the element encrypted with a
// fresh AES key, the key encrypted with RSA, the EncryptedKey inside the
// EncryptedData's KeyInfo.
func encryptAssertion(t *testing.T, el *etree.Element, cert []byte, how encryption) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	doc.SetRoot(el.Copy())
	plain, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(cert)
	if err != nil {
		t.Fatal(err)
	}
	pub := c.PublicKey.(*rsa.PublicKey)
	key := make([]byte, 32)
	rand.Read(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	method := "http://www.w3.org/2009/xmlenc11#aes256-gcm"
	if how.cbc {
		method = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
		pad := aes.BlockSize - len(plain)%aes.BlockSize
		plain = append(plain, bytes.Repeat([]byte{byte(pad)}, pad)...)
		data = make([]byte, aes.BlockSize+len(plain))
		rand.Read(data[:aes.BlockSize])
		cipher.NewCBCEncrypter(block, data[:aes.BlockSize]).CryptBlocks(data[aes.BlockSize:], plain)
	} else {
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			t.Fatal(err)
		}
		nonce := make([]byte, gcm.NonceSize())
		rand.Read(nonce)
		data = gcm.Seal(nonce, nonce, plain, nil)
	}
	transport := `<xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>`
	var wrapped []byte
	if how.pkcs1v15 {
		transport = `<xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-1_5"/>`
		wrapped, err = rsa.EncryptPKCS1v15(rand.Reader, pub, key)
	} else {
		wrapped, err = rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, key, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return element(t, `<saml:EncryptedAssertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">`+
		`<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Type="http://www.w3.org/2001/04/xmlenc#Element">`+
		`<xenc:EncryptionMethod Algorithm="`+method+`"/>`+
		`<ds:KeyInfo><xenc:EncryptedKey>`+transport+`<xenc:CipherData><xenc:CipherValue>`+base64.StdEncoding.EncodeToString(wrapped)+`</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey></ds:KeyInfo>`+
		`<xenc:CipherData><xenc:CipherValue>`+base64.StdEncoding.EncodeToString(data)+`</xenc:CipherValue></xenc:CipherData>`+
		`</xenc:EncryptedData></saml:EncryptedAssertion>`)
}
