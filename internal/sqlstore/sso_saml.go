package sqlstore

import (
	"context"
	"encoding/base64"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse"

	"github.com/gatehouse/gatehouse/internal/sso"
)

// RememberAssertion implements sso.Store: the primary key refuses an
// assertion id seen before on any instance (ErrConflict); expired ids are
// pruned on the way.
func (s *SSO) RememberAssertion(ctx context.Context, connID, assertionID string, until, now time.Time) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `DELETE FROM sso_saml_assertions WHERE expires_at < $1`, micros(now)); err != nil {
			return err
		}
		return inserted(c.w().ExecContext(ctx, `INSERT INTO sso_saml_assertions (connection_id, assertion_id, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, connID, assertionID, micros(until)))
	})
}

// SAMLConnections implements sso.MetadataStore.
func (s *SSO) SAMLConnections(ctx context.Context) ([]sso.Connection, error) {
	return s.connections(ctx, `SELECT `+ssoColumns+` FROM sso_connections WHERE protocol = 'saml' ORDER BY id`)
}

// SetSAMLKeys implements sso.SPKeyStore: the keys change only while they
// are still old, so two instances making or rotating them at once keep
// one outcome (ErrConflict for the other).
func (s *SSO) SetSAMLKeys(ctx context.Context, id string, old, keys []byte) error {
	err := affected(s.w().ExecContext(ctx, `UPDATE sso_connections SET saml_sp_keys = $3 WHERE id = $1 AND saml_sp_keys = $2`,
		id, base64.StdEncoding.EncodeToString(old), base64.StdEncoding.EncodeToString(keys)))
	if errors.Is(err, gatehouse.ErrNotFound) {
		return gatehouse.ErrConflict
	}
	return err
}
