package sso

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/token"
	saml2 "github.com/russellhaering/gosaml2"
	"github.com/russellhaering/gosaml2/types"
	dsig "github.com/russellhaering/goxmldsig"
)

// AssertionStore remembers the SAML assertions a connection accepted.
type AssertionStore interface {
	// RememberAssertion records assertionID of connection connID until
	// until; ErrConflict when it was recorded before (a replay).
	RememberAssertion(ctx context.Context, connID, assertionID string, until, now time.Time) error
}

// SAMLSkew is the clock difference allowed with an identity provider on
// an assertion's NotBefore and NotOnOrAfter.
const SAMLSkew = 2 * time.Minute

// maxSAMLResponse bounds the encoded SAMLResponse a sign-in may post.
const maxSAMLResponse = 512 << 10

var (
	errNotSAML = gatehouse.Errorf(gatehouse.KindNotFound, "SAML connection not found")
	// errReplay answers an assertion accepted before.
	errReplay = gatehouse.Errorf(gatehouse.KindUnauthorized, "this sign-in was used already; start again")
	// errUnsolicited answers a response no request of ours asked for
	// while the connection does not allow IdP-initiated sign-in.
	errUnsolicited = gatehouse.Errorf(gatehouse.KindUnauthorized,
		"this sign-in was not started here or was started in another browser; start it from the sign-in page")
)

// SAMLEntityID is our entity id at connection id (its metadata URL).
func (s *Service) SAMLEntityID(id string) string { return s.base + "/v1/sso/saml/" + id + "/metadata" }

// SAMLACSURL is our assertion consumer service at connection id.
func (s *Service) SAMLACSURL(id string) string { return s.base + "/v1/sso/saml/" + id + "/acs" }

// serviceProvider is gosaml2's service provider for c at the service's
// clock: it checks signatures against c's certificates only, and signs
// our requests and decrypts with key (none: neither).
func (s *Service) serviceProvider(c *Connection, key *tls.Certificate) (*saml2.SAMLServiceProvider, error) {
	store, err := s.idpCertificates(c)
	if err != nil {
		return nil, err
	}
	sp := &saml2.SAMLServiceProvider{IdentityProviderSSOURL: c.SAML.SSOURL, IdentityProviderSSOBinding: bindingRedirect,
		IdentityProviderIssuer: c.SAML.IdPEntityID, AssertionConsumerServiceURL: s.SAMLACSURL(c.ID), ServiceProviderIssuer: s.SAMLEntityID(c.ID),
		AudienceURI: s.SAMLEntityID(c.ID), IDPCertificateStore: store, AllowMissingAttributes: true, MaximumXMLTokens: 20000,
		Clock: dsig.NewFakeClockAt(s.Now())}
	if key != nil {
		sp.SPKeyStore, sp.SignAuthnRequests, sp.SignAuthnRequestsAlgorithm = dsig.TLSCertKeyStore(*key), true, dsig.RSASHA256SignatureMethod
	}
	return sp, nil
}

// idpCached is a connection's identity-provider certificates as parsed,
// kept while its metadata names the same ones.
type idpCached struct {
	certs []string // base64 DER, as in the metadata
	store *dsig.MemoryX509CertificateStore
}

// idpCertificates are the certificates c's identity provider signs
// with, parsed once per connection and set of certificates (every
// sign-in read them again before); the store is only read after.
func (s *Service) idpCertificates(c *Connection) (*dsig.MemoryX509CertificateStore, error) {
	s.mu.Lock()
	cached, ok := s.idpCerts[c.ID]
	s.mu.Unlock()
	if ok && slices.Equal(cached.certs, c.SAML.Certs) {
		return cached.store, nil
	}
	store := &dsig.MemoryX509CertificateStore{}
	for _, b64 := range c.SAML.Certs {
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, gatehouse.Internal("saml certificate", err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, gatehouse.Internal("saml certificate", err)
		}
		store.Roots = append(store.Roots, cert)
	}
	s.mu.Lock()
	if len(s.idpCerts) >= 1000 {
		clear(s.idpCerts)
	}
	s.idpCerts[c.ID] = idpCached{certs: slices.Clone(c.SAML.Certs), store: store}
	s.mu.Unlock()
	return store, nil
}

// samlConnection is connection id when it is a SAML one.
func (s *Service) samlConnection(ctx context.Context, id string) (*Connection, error) {
	if !gatehouse.IsID(id) {
		return nil, errNotSAML
	}
	c, err := s.store.ConnectionByID(ctx, id)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && c.SAML == nil) {
		return nil, errNotSAML
	}
	if err != nil {
		return nil, gatehouse.Internal("find sso connection", err)
	}
	return c, nil
}

// startSAML begins a SP-initiated sign-in through c: an AuthnRequest
// whose id the flow keeps (as its nonce) for InResponseTo, signed with
// c's first key as the HTTP-Redirect binding signs (SigAlg and Signature
// query parameters, RSA-SHA256), and a fresh RelayState (the flow's
// state) bound to a browser secret.
func (s *Service) startSAML(ctx context.Context, c *Connection, next string) (*Started, error) {
	keys, err := s.samlKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	sp, err := s.serviceProvider(c, &keys[0])
	if err != nil {
		return nil, err
	}
	doc, err := sp.BuildAuthRequestDocumentNoSig()
	if err != nil {
		return nil, gatehouse.Internal("build authn request", err)
	}
	relay, browser := token.NewSecret(""), token.NewSecret("")
	f := &Flow{StateHash: token.Hash(relay), ConnectionID: c.ID, BrowserHash: token.Hash(browser), Nonce: doc.Root().SelectAttrValue("ID", ""),
		Next: safeNext(next), ExpiresAt: s.Now().Add(FlowTTL)}
	if f.Nonce == "" {
		return nil, gatehouse.Internal("build authn request", errors.New("no request id"))
	}
	u, err := sp.BuildAuthURLRedirect(relay, doc)
	if err != nil {
		return nil, gatehouse.Internal("build authn request url", err)
	}
	if err := s.store.CreateFlow(ctx, f); err != nil {
		return nil, gatehouse.Internal("create sso flow", err)
	}
	return &Started{URL: u, Browser: browser, CrossSite: true}, nil
}

// ACS completes a SAML sign-in posted to connection id's assertion
// consumer service: the flow of relay, used once and only by the browser
// that started it (or none, for an IdP-initiated response where the
// connection allows it); the response verified; the person signed in as
// OpenID Connect sign-ins are. Every outcome after the flow is audited.
func (s *Service) ACS(ctx context.Context, id, response, relay, browser string, meta gatehouse.SessionMeta) (*Done, error) {
	c, err := s.samlConnection(ctx, id)
	if err != nil {
		return nil, err
	}
	var f *Flow
	if relay != "" {
		f, err = s.store.UseFlow(ctx, token.Hash(relay), s.Now())
		if err != nil && !errors.Is(err, gatehouse.ErrNotFound) {
			return nil, gatehouse.Internal("use sso flow", err)
		}
		if f != nil && (f.ConnectionID != c.ID || subtle.ConstantTimeCompare([]byte(f.BrowserHash), []byte(token.Hash(browser))) != 1) {
			return nil, errFlow
		}
	}
	if f == nil && !c.SAML.AllowIdPInitiated {
		return nil, errUnsolicited
	}
	requestID, next := "", "/"
	if f != nil {
		requestID, next = f.Nonce, f.Next
	}
	out, subject, err := s.completeSAML(ctx, c, response, requestID, meta)
	s.auditOutcome(ctx, c, out, subject, err)
	if err != nil {
		return nil, err
	}
	return &Done{SignIn: out, Next: next}, nil
}

// completeSAML verifies response as the answer to requestID ("" for an
// IdP-initiated one), spends its assertion's id, and signs the person in.
func (s *Service) completeSAML(ctx context.Context, c *Connection, response, requestID string, meta gatehouse.SessionMeta) (*identity.SignIn, string, error) {
	a, until, err := s.verifySAML(ctx, c, response, requestID)
	if err != nil {
		s.log.Info("saml response refused", "connection", c.ID, "err", err)
		return nil, "", errUpstream
	}
	subject, email, name := samlIdentity(a)
	attrs := samlAttributes(a)
	name = c.mappedName(attrs, name)
	if subject == "" {
		return nil, "", gatehouse.Errorf(gatehouse.KindForbidden, "your identity provider sent no NameID")
	}
	if err := s.store.RememberAssertion(ctx, c.ID, a.ID, until, s.Now()); errors.Is(err, gatehouse.ErrConflict) {
		return nil, subject, errReplay
	} else if err != nil {
		return nil, subject, gatehouse.Internal("remember saml assertion", err)
	}
	si, err := s.admit(ctx, c, subject, email, name, attrs, meta)
	return si, subject, err
}

// verifySAML checks a posted response: gosaml2 decrypts an encrypted
// assertion with one of c's keys (its algorithms checked first) and
// verifies the signature (of the Response or of its Assertion, against
// the connection's certificates only), the issuer, status, bearer
// confirmation, Recipient and its expiry, the same for an encrypted
// assertion as for a plain one; here: a Destination equal to our ACS,
// exactly one assertion,
// an audience restriction naming us, NotBefore/NotOnOrAfter within
// SAMLSkew, and InResponseTo equal to the request (empty when
// unsolicited). until is when the assertion id may be forgotten.
func (s *Service) verifySAML(ctx context.Context, c *Connection, response, requestID string) (*types.Assertion, time.Time, error) {
	if response == "" || len(response) > maxSAMLResponse {
		return nil, time.Time{}, errors.New("no SAMLResponse or too long")
	}
	response = strings.TrimSpace(response)
	raw, err := base64.StdEncoding.DecodeString(response)
	if err != nil {
		return nil, time.Time{}, err
	}
	encrypted, err := checkEncryption(raw)
	if err != nil {
		return nil, time.Time{}, err
	}
	sp, resp, err := s.validateSAML(ctx, c, response, encrypted)
	if err != nil {
		return nil, time.Time{}, err
	}
	if resp.Destination != sp.AssertionConsumerServiceURL {
		return nil, time.Time{}, errors.New("destination is not our ACS")
	}
	if len(resp.Assertions) != 1 || resp.Assertions[0].ID == "" {
		return nil, time.Time{}, errors.New("not exactly one assertion with an id")
	}
	a := &resp.Assertions[0]
	warn, err := sp.VerifyAssertionConditions(a)
	if err != nil {
		return nil, time.Time{}, err
	}
	if warn.NotInAudience || len(a.Conditions.AudienceRestrictions) == 0 {
		return nil, time.Time{}, errors.New("audience is not us")
	}
	nb, _ := time.Parse(time.RFC3339, a.Conditions.NotBefore) // parsed by VerifyAssertionConditions
	noa, _ := time.Parse(time.RFC3339, a.Conditions.NotOnOrAfter)
	if now := s.Now(); now.Before(nb.Add(-SAMLSkew)) || !now.Before(noa.Add(SAMLSkew)) {
		return nil, time.Time{}, errors.New("outside the assertion's validity")
	}
	scd := a.Subject.SubjectConfirmation.SubjectConfirmationData // non-nil after Validate
	if resp.InResponseTo != requestID || scd.InResponseTo != requestID {
		return nil, time.Time{}, errors.New("InResponseTo is not our request")
	}
	return a, noa.Add(SAMLSkew), nil
}

// validateSAML is gosaml2's verdict on response; an encrypted one is
// tried with each of c's keys (two while one is staged for rotation: the
// identity provider encrypts to whichever it has), the same checks each
// time.
func (s *Service) validateSAML(ctx context.Context, c *Connection, response string, encrypted bool) (*saml2.SAMLServiceProvider, *types.Response, error) {
	keys := []tls.Certificate{}
	if encrypted {
		var err error
		if keys, err = s.samlKeys(ctx, c); err != nil {
			return nil, nil, err
		}
	}
	var last error
	for i := 0; i == 0 || i < len(keys); i++ {
		var key *tls.Certificate
		if i < len(keys) {
			key = &keys[i]
		}
		sp, err := s.serviceProvider(c, key)
		if err != nil {
			return nil, nil, err
		}
		resp, err := sp.ValidateEncodedResponse(response)
		if err == nil {
			return sp, resp, nil
		}
		last = err
	}
	return nil, nil, last
}

// The attributes an email address or a name is read from, in order.
var (
	emailAttributes = []string{"email", "emailAddress", "mail", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
		"urn:oid:0.9.2342.19200300.100.1.3"}
	nameAttributes = []string{"name", "displayName", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
		"urn:oid:2.16.840.1.113730.3.1.241"}
)

// samlAttributes are an assertion's attributes with their values.
func samlAttributes(a *types.Assertion) attributes {
	out := attributes{}
	if a.AttributeStatement == nil {
		return out
	}
	for _, at := range a.AttributeStatement.Attributes {
		for _, v := range at.Values {
			out[at.Name] = append(out[at.Name], v.Value)
		}
	}
	return out
}

const nameIDTransient = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"

// samlIdentity is an assertion's subject (its NameID; the address for a
// transient one), email (an email attribute, else the NameID) and name.
func samlIdentity(a *types.Assertion) (subject, email, name string) {
	attr := func(names []string) string {
		if a.AttributeStatement == nil {
			return ""
		}
		for _, n := range names {
			for _, at := range a.AttributeStatement.Attributes {
				if at.Name == n && len(at.Values) == 1 {
					return strings.TrimSpace(at.Values[0].Value)
				}
			}
		}
		return ""
	}
	nid := a.Subject.NameID
	if nid == nil {
		return "", "", ""
	}
	subject, email, name = strings.TrimSpace(nid.Value), attr(emailAttributes), attr(nameAttributes)
	if email == "" {
		email = subject
	}
	if nid.Format == nameIDTransient {
		subject = "email:" + strings.ToLower(email)
	}
	return subject, email, name
}
