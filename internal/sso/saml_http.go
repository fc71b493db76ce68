package sso

import (
	"context"
	"encoding/xml"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	saml2 "github.com/russellhaering/gosaml2"
	"github.com/russellhaering/gosaml2/types"
)

// limitACS is the per-IP limit of the assertion consumer service: burst,
// one more every n seconds.
var limitACS = [2]int{20, 3}

// mountSAML serves each SAML connection's service provider: its metadata
// (public: the IdP's administrator pastes or fetches it) and its
// assertion consumer service (HTTP-POST binding). Sign-in starts at
// /v1/sso/start like an OpenID Connect one.
func mountSAML(m *http.ServeMux, k Kernel, h *handlers) {
	m.Handle("GET /v1/sso/saml/{conn_id}/metadata", k.Public(h.handleSAMLMetadata))
	acs := k.Limiter("sso_saml_acs", limitACS[0], time.Duration(limitACS[1])*time.Second)
	m.Handle("POST /v1/sso/saml/{conn_id}/acs", k.PerIP(acs, h.handleSAMLACS))
	m.Handle("POST /v1/orgs/{id}/sso/{conn_id}/saml/keys", k.FullIn("id", h.handleSAMLKey(KeyStage)))
	m.Handle("POST /v1/orgs/{id}/sso/{conn_id}/saml/keys/promote", k.FullIn("id", h.handleSAMLKey(KeyPromote)))
}

// handleSAMLKey handles "POST /v1/orgs/{id}/sso/{conn_id}/saml/keys"
// (stage a new key) and ".../saml/keys/promote" (the staged key signs).
func (h *handlers) handleSAMLKey(step string) func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
		c, err := h.svc.RotateSAMLKey(r.Context(), p, r.PathValue("id"), r.PathValue("conn_id"), step)
		if err != nil {
			return err
		}
		h.writeConnection(w, c)
		return nil
	}
}

// samlBody is the saml object of POST and PATCH /v1/orgs/{id}/sso.
type samlBody struct {
	MetadataXML       *string `json:"metadata_xml"`
	MetadataURL       *string `json:"metadata_url"`
	AllowIdPInitiated *bool   `json:"allow_idp_initiated"`
}

// samlInput sets in.SAML from b: a body of type saml, or with a saml
// object, makes or changes a SAML connection.
func (b *body) samlInput(in *Input) error {
	if b.Type != nil && *b.Type != ProtocolOIDC && *b.Type != ProtocolSAML {
		return gatehouse.InvalidField("type", "type must be oidc or saml")
	}
	if b.SAML == nil && (b.Type == nil || *b.Type != ProtocolSAML) {
		return nil
	}
	in.SAML = &SAMLInput{}
	if b.SAML != nil {
		in.SAML = &SAMLInput{MetadataXML: b.SAML.MetadataXML, MetadataURL: b.SAML.MetadataURL, AllowIdPInitiated: b.SAML.AllowIdPInitiated}
	}
	return nil
}

// samlJSON is a SAML connection's two sides: ours to paste into the
// identity provider, and the provider's as read from its metadata.
type samlJSON struct {
	EntityID          string `json:"entity_id"`
	ACSURL            string `json:"acs_url"`
	MetadataURL       string `json:"metadata_url"`
	IdPEntityID       string `json:"idp_entity_id"`
	IdPSSOURL         string `json:"idp_sso_url"`
	IdPMetadataURL    string `json:"idp_metadata_url,omitempty"`
	IdPCertificates   int    `json:"idp_certificates"`
	AllowIdPInitiated bool   `json:"allow_idp_initiated"`
	// IdPMetadataFetchedAt is when the metadata was last read from its
	// URL, and IdPMetadataError why that read failed (the last good
	// metadata stays).
	IdPMetadataFetchedAt string `json:"idp_metadata_fetched_at,omitempty"`
	IdPMetadataError     string `json:"idp_metadata_error,omitempty"`
	// SPCertificates are the connection's own certificates (ours), the
	// signing one first, a staged one after it.
	SPCertificates []spCertJSON `json:"sp_certificates"`
}

func (h *handlers) samlJSON(c *Connection) *samlJSON {
	out := &samlJSON{EntityID: h.svc.SAMLEntityID(c.ID), ACSURL: h.svc.SAMLACSURL(c.ID), MetadataURL: h.svc.SAMLEntityID(c.ID),
		IdPEntityID: c.SAML.IdPEntityID, IdPSSOURL: c.SAML.SSOURL, IdPMetadataURL: c.SAML.MetadataURL, IdPCertificates: len(c.SAML.Certs),
		AllowIdPInitiated: c.SAML.AllowIdPInitiated, IdPMetadataError: c.SAML.RefreshError, SPCertificates: h.svc.spCertificates(c)}
	if !c.SAML.FetchedAt.IsZero() {
		out.IdPMetadataFetchedAt = httpjson.Stamp(c.SAML.FetchedAt)
	}
	return out
}

// handleSAMLMetadata handles "GET /v1/sso/saml/{conn_id}/metadata".
func (h *handlers) handleSAMLMetadata(w http.ResponseWriter, r *http.Request) error {
	raw, err := h.svc.SAMLMetadata(r.Context(), r.PathValue("conn_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/samlmetadata+xml")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(raw)
	return nil
}

// handleSAMLACS handles "POST /v1/sso/saml/{conn_id}/acs": a form with
// SAMLResponse and RelayState; answered as the OpenID Connect callback is.
func (h *handlers) handleSAMLACS(w http.ResponseWriter, r *http.Request) error {
	browser := ""
	if c, err := r.Cookie(h.cookieName(cookieFlow)); err == nil {
		browser = c.Value
	}
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(cookieFlow), Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	d, err := h.svc.ACS(r.Context(), r.PathValue("conn_id"), r.PostFormValue("SAMLResponse"), r.PostFormValue("RelayState"), browser, h.k.SessionMeta(r))
	return h.finish(w, r, d, err)
}

// SAMLMetadata is our service provider's metadata at SAML connection id:
// entity id, the ACS (HTTP-POST), signed assertions wanted, our
// AuthnRequests signed, and the connection's keys (for signing and for
// encryption; two while a new one is staged).
func (s *Service) SAMLMetadata(ctx context.Context, id string) ([]byte, error) {
	c, err := s.samlConnection(ctx, id)
	if err != nil {
		return nil, err
	}
	keys, err := s.samlKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	ed := types.EntityDescriptor{ValidUntil: s.Now().Add(7 * 24 * time.Hour), EntityID: s.SAMLEntityID(c.ID),
		SPSSODescriptor: &types.SPSSODescriptor{WantAssertionsSigned: true, AuthnRequestsSigned: true,
			ProtocolSupportEnumeration: saml2.SAMLProtocolNamespace, KeyDescriptors: spKeyDescriptors(keys),
			NameIDFormats:             []string{"urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"},
			AssertionConsumerServices: []types.IndexedEndpoint{{Binding: saml2.BindingHttpPost, Location: s.SAMLACSURL(c.ID), Index: 1}}}}
	raw, err := xml.MarshalIndent(ed, "", "  ")
	if err != nil {
		return nil, gatehouse.Internal("saml metadata", err)
	}
	return append([]byte(xml.Header), raw...), nil
}
