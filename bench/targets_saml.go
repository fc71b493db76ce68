package main

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// samlACSSigned is how many sign-ins the saml_acs target prepares: 500/s
// (issue 27's target) for 10 s is 5,000.
const samlACSSigned = 6_000

// samlACS is the saml_acs target's state: an identity provider's key and
// certificate (RSA 2048, as most IdPs sign), the connection's ACS and
// entity id, and the sign-ins prepared before the run, each a started
// flow (its cookie and RelayState) and a response to its AuthnRequest,
// taken in turn.
type samlACS struct {
	cert     tls.Certificate
	entityID string
	acs      string
	audience string
	domain   string
	posts    []samlPost
	next     atomic.Int64
}

// samlPost is one prepared sign-in: the ACS form and the flow cookie of
// the browser that started it.
type samlPost struct{ body, cookie string }

// samlACSTarget measures "POST /v1/sso/saml/{id}/acs" (issue 27: at least
// 500 sign-ins/s on SQLite): an SP-initiated sign-in's signed response
// (the assertion signed with RSA-SHA256, exclusive C14N) verified against
// the connection's certificate, its InResponseTo checked against the
// AuthnRequest the start endpoint stored, its id spent, a new person
// provisioned just in time (a fresh address of the connection's domain
// each time) and a session opened: answered 303 with the session cookie.
// The flows are started through the real start endpoint and the
// responses signed before the timer, so neither the starts nor the
// bench's RSA signing are measured.
func samlACSTarget() target {
	t := newTarget("saml_acs", setupSAMLACS, func(_ int, s *samlACS) (*http.Request, error) {
		i := s.next.Add(1) - 1
		if i >= int64(len(s.posts)) {
			return nil, errExhausted
		}
		req, err := formRequest(s.acs, []byte(s.posts[i].body))
		if err == nil {
			req.Header.Set("Cookie", s.posts[i].cookie)
		}
		return req, err
	}, nil)
	t.finite = true
	setup := t.setup
	t.setup = func(ctx context.Context, e *env) (*runner, error) {
		r, err := setup(ctx, e)
		if r != nil {
			r.redirect = http.StatusSeeOther
		}
		return r, err
	}
	return t
}

func setupSAMLACS(ctx context.Context, e *env) (*samlACS, error) {
	s := &samlACS{entityID: "https://idp.bench.invalid/entity"}
	var err error
	if s.cert, err = samlKeyCert(); err != nil {
		return nil, err
	}
	db, err := openSeedDB(ctx, e.db)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	org, domain, sess, err := ssoOrg(ctx, e, db, "saml")
	if err != nil {
		return nil, err
	}
	s.domain = domain
	var conn struct {
		Connection struct {
			ID   string `json:"id"`
			SAML struct {
				ACS      string `json:"acs_url"`
				EntityID string `json:"entity_id"`
			} `json:"saml"`
		} `json:"connection"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org+"/sso", sess.AccessToken, map[string]any{"type": "saml",
		"name": "Bench SAML IdP", "domains": []string{domain}, "saml": map[string]any{"metadata_xml": s.metadata()}}, &conn); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: SAML is not in this build", why)
		}
		return nil, err
	}
	s.audience = conn.Connection.SAML.EntityID
	// The server names its ACS by its base URL; the bench posts to the
	// address it dials.
	u, err := url.Parse(conn.Connection.SAML.ACS)
	if err != nil {
		return nil, err
	}
	s.acs = e.baseURL + u.Path
	start := e.baseURL + "/v1/sso/start?connection=" + conn.Connection.ID + "&next=/"

	// Start the flows and sign their responses on every core.
	s.posts = make([]samlPost, samlACSSigned)
	n := runtime.NumCPU()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(s.posts) && errs[w] == nil; i += n {
				s.posts[i], errs[w] = s.prepare(ctx, e.client, start, conn.Connection.SAML.ACS, i)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// One sign-in, checked, before the measured ones (the last prepared,
	// so the run's order is unchanged).
	last := len(s.posts) - 1
	req, err := formRequest(s.acs, []byte(s.posts[last].body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", s.posts[last].cookie)
	resp, err := noRedirects(e.client).Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		return nil, &httpError{method: http.MethodPost, url: s.acs, status: resp.StatusCode, body: body}
	}
	s.posts = s.posts[:last]
	return s, nil
}

// noRedirects is c answering redirects instead of following them.
func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// prepare starts one sign-in at the start endpoint, reads its
// AuthnRequest's id and RelayState from the redirect to the IdP, and
// signs the IdP's response for person i.
func (s *samlACS) prepare(ctx context.Context, c *http.Client, start, acs string, i int) (samlPost, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, start, nil)
	if err != nil {
		return samlPost{}, err
	}
	resp, err := noRedirects(c).Do(req)
	if err != nil {
		return samlPost{}, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || len(resp.Cookies()) == 0 {
		return samlPost{}, fmt.Errorf("sso start answered %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookies []string
	for _, ck := range resp.Cookies() {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	q := loc.Query()
	id, err := authnRequestID(q.Get("SAMLRequest"))
	if err != nil {
		return samlPost{}, err
	}
	signed, err := s.response(id, acs, fmt.Sprintf("p%d-%s@%s", i, randomHex(3), s.domain))
	if err != nil {
		return samlPost{}, err
	}
	return samlPost{body: url.Values{"SAMLResponse": {signed}, "RelayState": {q.Get("RelayState")}}.Encode(),
		cookie: strings.Join(cookies, "; ")}, nil
}

// authnRequestID is the ID of an AuthnRequest sent with the HTTP-Redirect
// binding (deflated, base64).
func authnRequestID(encoded string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return "", fmt.Errorf("SAMLRequest: %w", err)
	}
	x, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return "", fmt.Errorf("SAMLRequest: %w", err)
	}
	var r struct {
		ID string `xml:"ID,attr"`
	}
	if err := xml.Unmarshal(x, &r); err != nil || r.ID == "" {
		return "", fmt.Errorf("SAMLRequest has no ID: %v", err)
	}
	return r.ID, nil
}

// samlKeyCert is an RSA 2048 key and a self-signed certificate for it.
func samlKeyCert() (tls.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "bench idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// metadata is the IdP's metadata document: its entity id, signing
// certificate and a sign-on URL the bench never visits.
func (s *samlACS) metadata() string {
	return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="` + s.entityID + `">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>
      <ds:X509Certificate>` + base64.StdEncoding.EncodeToString(s.cert.Certificate[0]) + `</ds:X509Certificate>
    </ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.bench.invalid/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`
}

const samlInstant = "2006-01-02T15:04:05Z"

// response is the IdP's answer to request id for email, its assertion
// signed enveloped, base64 as the HTTP-POST binding sends it; valid for
// 10 minutes from now.
func (s *samlACS) response(requestID, acs, email string) (string, error) {
	now := time.Now().UTC()
	esc := func(v string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	assertion := fmt.Sprintf(`<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_a%s" Version="2.0" IssueInstant="%s">`+
		`<saml:Issuer>%s</saml:Issuer>`+
		`<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">%s</saml:NameID>`+
		`<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="%s" NotOnOrAfter="%s" Recipient="%s"/></saml:SubjectConfirmation></saml:Subject>`+
		`<saml:Conditions NotBefore="%s" NotOnOrAfter="%s"><saml:AudienceRestriction><saml:Audience>%s</saml:Audience></saml:AudienceRestriction></saml:Conditions>`+
		`<saml:AuthnStatement AuthnInstant="%s" SessionIndex="s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`+
		`<saml:AttributeStatement><saml:Attribute Name="displayName"><saml:AttributeValue>Bench Person</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>`+
		`</saml:Assertion>`,
		randomHex(10), now.Format(samlInstant), esc(s.entityID), esc(email), esc(requestID), now.Add(10*time.Minute).Format(samlInstant), esc(acs),
		now.Add(-time.Minute).Format(samlInstant), now.Add(10*time.Minute).Format(samlInstant), esc(s.audience), now.Format(samlInstant))
	doc := etree.NewDocument()
	if err := doc.ReadFromString(assertion); err != nil {
		return "", err
	}
	sc := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(s.cert))
	sc.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	signed, err := sc.SignEnveloped(doc.Root())
	if err != nil {
		return "", err
	}
	resp := etree.NewDocument()
	if err := resp.ReadFromString(fmt.Sprintf(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r%s" Version="2.0" IssueInstant="%s" Destination="%s" InResponseTo="%s">`+
		`<saml:Issuer>%s</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:Response>`,
		randomHex(10), now.Format(samlInstant), esc(acs), esc(requestID), esc(s.entityID))); err != nil {
		return "", err
	}
	resp.Root().AddChild(signed)
	out, err := resp.WriteToBytes()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(out), nil
}
