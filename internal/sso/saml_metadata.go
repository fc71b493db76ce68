package sso

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/russellhaering/gosaml2/types"
)

// The protocols of a connection.
const (
	ProtocolOIDC = "oidc"
	ProtocolSAML = "saml"
)

// MaxSAMLMetadata bounds an identity provider's metadata, uploaded or
// fetched.
const MaxSAMLMetadata = 256 << 10

// bindingRedirect is the binding our authentication requests use.
const bindingRedirect = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"

// SAMLConfig is the identity provider of a SAML connection, read from its
// metadata. Nothing in it is secret.
type SAMLConfig struct {
	IdPEntityID string `json:"idp_entity_id"`
	// SSOURL is the IdP's single sign-on endpoint (HTTP-Redirect binding).
	SSOURL string `json:"sso_url"`
	// Certs are the IdP's signing certificates, base64 DER.
	Certs []string `json:"certs"`
	// MetadataURL is where the metadata was fetched from ("" when uploaded).
	MetadataURL string `json:"metadata_url,omitempty"`
	// AllowIdPInitiated accepts responses no request of ours asked for
	// (off unless the workspace turns it on).
	AllowIdPInitiated bool `json:"allow_idp_initiated"`
	// FetchedAt is when the metadata was last read from MetadataURL, and
	// RefreshError why that read failed ("" when it succeeded): the
	// metadata is the last good one (RefreshSAMLMetadata).
	FetchedAt    time.Time `json:"fetched_at,omitzero"`
	RefreshError string    `json:"refresh_error,omitempty"`
}

// SAMLInput is the saml object of POST and PATCH /v1/orgs/{id}/sso: the
// IdP's metadata as XML or a URL (one of them on creation), and the
// IdP-initiated switch.
type SAMLInput struct {
	MetadataXML       *string
	MetadataURL       *string
	AllowIdPInitiated *bool
}

// idpMetadata is what an IdP's metadata gave: everything of SAMLConfig
// but the switch.
type idpMetadata struct {
	entityID, ssoURL, from string
	certs                  []string
}

// samlMetadata reads in's metadata, fetching it when given by URL (through
// the outbound guard: https, public addresses only, timeouts, a size cap);
// nil when in names none.
func (s *Service) samlMetadata(ctx context.Context, in *SAMLInput) (*idpMetadata, error) {
	if in == nil || (in.MetadataXML == nil && in.MetadataURL == nil) {
		return nil, nil
	}
	if in.MetadataXML != nil && in.MetadataURL != nil {
		return nil, gatehouse.InvalidField("saml", "give metadata_xml or metadata_url, not both")
	}
	if in.MetadataXML != nil {
		if len(*in.MetadataXML) > MaxSAMLMetadata {
			return nil, gatehouse.InvalidField("saml.metadata_xml", "metadata_xml must be at most %d bytes", MaxSAMLMetadata)
		}
		return s.parseIdPMetadata([]byte(*in.MetadataXML))
	}
	schemes := []string{"https"}
	if s.private {
		schemes = append(schemes, "http")
	}
	u, ok := outbound.ParseURL(strings.TrimSpace(*in.MetadataURL), maxField, schemes...)
	if !ok {
		return nil, gatehouse.InvalidField("saml.metadata_url", "metadata_url must be the identity provider's https metadata URL")
	}
	raw, err := s.fetchMetadata(ctx, u)
	if err != nil {
		s.log.Info("saml metadata fetch failed", "url", u, "err", err)
		return nil, gatehouse.InvalidField("saml.metadata_url", "the metadata could not be read from metadata_url (https on a public address, at most %d bytes)", MaxSAMLMetadata)
	}
	md, err := s.parseIdPMetadata(raw)
	if err != nil {
		return nil, err
	}
	md.from = u
	return md, nil
}

// fetchMetadata GETs u through the service's outbound client.
func (s *Service) fetchMetadata(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/samlmetadata+xml, application/xml, text/xml")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errStatus(resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxSAMLMetadata+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxSAMLMetadata {
		return nil, errStatus(http.StatusRequestEntityTooLarge)
	}
	return raw, nil
}

type errStatus int

func (e errStatus) Error() string { return "metadata answered " + http.StatusText(int(e)) }

// parseIdPMetadata reads an EntityDescriptor with an IDPSSODescriptor: its
// entity id, an HTTP-Redirect sign-on URL and one or more signing
// certificates. encoding/xml expands no external entities.
func (s *Service) parseIdPMetadata(raw []byte) (*idpMetadata, error) {
	bad := func(why string) error {
		return gatehouse.InvalidField("saml.metadata_xml", "the identity provider's metadata %s", why)
	}
	var ed types.EntityDescriptor
	if err := xml.Unmarshal(raw, &ed); err != nil {
		return nil, bad("is not a SAML EntityDescriptor")
	}
	if ed.IDPSSODescriptor == nil {
		return nil, bad("has no IDPSSODescriptor")
	}
	md := &idpMetadata{entityID: strings.TrimSpace(ed.EntityID)}
	if md.entityID == "" || len(md.entityID) > maxField || gatehouse.CheckOneLine("entityID", md.entityID) != nil {
		return nil, bad("has no usable entityID")
	}
	schemes := []string{"https"}
	if s.private {
		schemes = append(schemes, "http")
	}
	for _, sso := range ed.IDPSSODescriptor.SingleSignOnServices {
		if sso.Binding != bindingRedirect {
			continue
		}
		if u, ok := outbound.ParseURL(strings.TrimSpace(sso.Location), maxField, schemes...); ok {
			md.ssoURL = u
			break
		}
	}
	if md.ssoURL == "" {
		return nil, bad("has no https SingleSignOnService with the HTTP-Redirect binding")
	}
	for _, kd := range ed.IDPSSODescriptor.KeyDescriptors {
		if kd.Use != "" && kd.Use != "signing" {
			continue
		}
		for _, c := range kd.KeyInfo.X509Data.X509Certificates {
			der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
			if err != nil {
				return nil, bad("has a certificate that is not base64")
			}
			if _, err := x509.ParseCertificate(der); err != nil {
				return nil, bad("has a certificate that does not parse")
			}
			md.certs = append(md.certs, base64.StdEncoding.EncodeToString(der))
		}
	}
	if len(md.certs) == 0 || len(md.certs) > 10 {
		return nil, bad("must name 1 to 10 signing certificates")
	}
	return md, nil
}
