package sqlstore

import (
	"context"
	"time"

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
