package sso

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse"
)

// SAMLRefreshEvery is how old a connection's metadata fetched by URL may
// grow before the refresh schedule reads it again: identity providers
// publish a new signing certificate beside the old one days before they
// switch, so a few hours pick it up in time; a failed read is tried again
// at the next run.
const SAMLRefreshEvery = 6 * time.Hour

// MetadataStore is what the metadata refresh reads: every SAML connection.
type MetadataStore interface {
	SAMLConnections(ctx context.Context) ([]Connection, error)
}

// RefreshSAMLMetadata reads again the metadata of every SAML connection
// made from a metadata URL whose last read is older than
// SAMLRefreshEvery (the job engine's schedule calls it). A read that
// fails keeps the last good metadata; the failure is logged, and audited
// when the last read had succeeded. A change of the certificates or the
// sign-on URL is audited. It returns how many connections changed.
func (s *Service) RefreshSAMLMetadata(ctx context.Context) (int, error) {
	cs, err := s.store.SAMLConnections(ctx)
	if err != nil {
		return 0, gatehouse.Internal("list saml connections", err)
	}
	changed := 0
	for i := range cs {
		c := &cs[i]
		if c.SAML == nil || c.SAML.MetadataURL == "" || s.Now().Sub(c.SAML.FetchedAt) < SAMLRefreshEvery {
			continue
		}
		md, ferr := s.samlMetadata(ctx, &SAMLInput{MetadataURL: &c.SAML.MetadataURL})
		did, err := s.storeRefresh(ctx, c, md, ferr)
		if err != nil {
			return changed, err
		}
		if did {
			changed++
		}
	}
	return changed, nil
}

// storeRefresh records one connection's refresh: md when the read
// succeeded, else the failure (ferr) with the last good metadata kept; in
// a transaction that finds the connection unchanged meanwhile (an edit
// in between wins). did reports a change of its certificates or sign-on
// URL.
func (s *Service) storeRefresh(ctx context.Context, read *Connection, md *idpMetadata, ferr error) (did bool, err error) {
	now := s.Now()
	if ferr != nil {
		s.log.Warn("saml metadata refresh failed; the last good metadata stays", "connection", read.ID, "url", read.SAML.MetadataURL, "err", ferr)
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.LockOrg(ctx, read.OrgID); err != nil {
			return gatehouse.Internal("lock org", err)
		}
		c, err := tx.ConnectionByID(ctx, read.ID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return nil
		}
		if err != nil {
			return gatehouse.Internal("find sso connection", err)
		}
		if c.SAML == nil || c.SAML.MetadataURL != read.SAML.MetadataURL || !c.SAML.FetchedAt.Equal(read.SAML.FetchedAt) {
			return nil
		}
		cfg := *c.SAML
		cfg.FetchedAt = now
		var action string // none when nothing changed
		meta := map[string]any{"metadata_url": cfg.MetadataURL}
		switch {
		case ferr != nil:
			if cfg.RefreshError == "" {
				action = "sso.metadata_refresh_failed"
			}
			cfg.RefreshError = refreshReason(ferr)
			meta["reason"] = cfg.RefreshError
		case md.entityID != cfg.IdPEntityID:
			// Another entity at the same URL is no refresh: an admin
			// decides (PATCH with the URL again).
			if cfg.RefreshError == "" {
				action = "sso.metadata_refresh_failed"
			}
			cfg.RefreshError = "the metadata names another entity ID"
			meta["reason"] = cfg.RefreshError
		default:
			did = !slices.Equal(md.certs, cfg.Certs) || md.ssoURL != cfg.SSOURL
			if did {
				action = "sso.metadata_refreshed"
				meta["certificates"] = len(md.certs)
			}
			cfg.SSOURL, cfg.Certs, cfg.RefreshError = md.ssoURL, md.certs, ""
		}
		c.SAML = &cfg
		if err := tx.UpdateConnection(ctx, c); err != nil {
			return gatehouse.Internal("update sso connection", err)
		}
		if action == "" {
			return nil
		}
		return s.ws.Audit(ctx, tx, c.OrgID, "", action, "sso_connection", c.ID, meta)
	})
	return did, err
}

// refreshReason is a failed read's reason for the audit log and the
// connection's page (the field error's text, never a response body).
func refreshReason(err error) string {
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		return e.Message
	}
	return "the metadata could not be read"
}
