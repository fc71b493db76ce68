package sso

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse"
)

// protocol is c's protocol.
func (c *Connection) protocol() string {
	if c.SAML != nil {
		return ProtocolSAML
	}
	return ProtocolOIDC
}

// applySAML checks in for a SAML connection and writes it to c: the
// common fields through apply, the identity provider from md (required
// on creation), the IdP-initiated switch; on creation, its own key.
func (s *Service) applySAML(in *Input, c *Connection, md *idpMetadata, create bool) error {
	if in.Issuer != nil || in.ClientID != nil || in.ClientSecret != nil || in.Scopes != nil {
		return gatehouse.InvalidField("saml", "a SAML connection takes no issuer, client_id, client_secret or scopes")
	}
	if create {
		if in.Domains == nil || len(*in.Domains) == 0 {
			return gatehouse.InvalidField("domains", "domains is required: one or more of the workspace's verified domains")
		}
		if md == nil {
			return gatehouse.InvalidField("saml.metadata_xml", "saml.metadata_xml or saml.metadata_url is required")
		}
		c.Scopes, c.SealedSecret = []string{}, nil
	}
	if err := s.apply(in, c, false); err != nil {
		return err
	}
	cfg := SAMLConfig{}
	if c.SAML != nil {
		cfg = *c.SAML
	}
	if md != nil {
		cfg.IdPEntityID, cfg.SSOURL, cfg.Certs, cfg.MetadataURL = md.entityID, md.ssoURL, md.certs, md.from
		cfg.FetchedAt, cfg.RefreshError = time.Time{}, ""
		if md.from != "" {
			cfg.FetchedAt = s.Now()
		}
	}
	if in.SAML != nil && in.SAML.AllowIdPInitiated != nil {
		cfg.AllowIdPInitiated = *in.SAML.AllowIdPInitiated
	}
	c.SAML, c.Issuer = &cfg, cfg.IdPEntityID
	if create {
		k, err := s.newSPKey(c.ID)
		if err != nil {
			return gatehouse.Internal("make saml key", err)
		}
		if c.SealedSPKeys, err = s.sealSPKeys(c.ID, []spKey{k}); err != nil {
			return gatehouse.Internal("seal saml key", err)
		}
	}
	return nil
}

// prepareSAML reads the metadata a change names, once the caller is known
// to manage the workspace (no fetch for anyone else); nil when it names
// none.
func (s *Service) prepareSAML(ctx context.Context, p *gatehouse.Principal, orgID string, in *SAMLInput) (*idpMetadata, error) {
	if in == nil || (in.MetadataXML == nil && in.MetadataURL == nil) {
		return nil, nil
	}
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	return s.samlMetadata(ctx, in)
}

// applyAny applies a change to c by its protocol.
func (s *Service) applyAny(in *Input, c *Connection, md *idpMetadata) error {
	if c.SAML != nil {
		return s.applySAML(in, c, md, false)
	}
	if in.SAML != nil {
		return gatehouse.InvalidField("saml", "an OpenID Connect connection takes no saml settings")
	}
	return s.apply(in, c, false)
}
