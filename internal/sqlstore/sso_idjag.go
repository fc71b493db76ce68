package sqlstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse/internal/sso"
)

// IDJAGPolicy implements sso.IDJAGStore.
func (s *SSO) IDJAGPolicy(ctx context.Context, orgID string) (*sso.IDJAGPolicy, error) {
	var raw string
	if err := s.one(s.r().QueryRowContext(ctx, `SELECT policy FROM idjag_policies WHERE org_id = $1`, orgID).Scan(&raw)); err != nil {
		return nil, err
	}
	var p sso.IDJAGPolicy
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// SetIDJAGPolicy implements sso.IDJAGStore.
func (s *SSO) SetIDJAGPolicy(ctx context.Context, orgID string, p *sso.IDJAGPolicy, by string, at time.Time) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO idjag_policies (org_id, policy, updated_by, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id) DO UPDATE SET policy = excluded.policy, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		orgID, string(b), by, micros(at))
	return err
}

// OIDCConnectionsByIssuer implements sso.IDJAGStore.
func (s *SSO) OIDCConnectionsByIssuer(ctx context.Context, issuer string) ([]sso.Connection, error) {
	return s.connections(ctx, `SELECT `+ssoColumns+` FROM sso_connections WHERE issuer = $1 AND protocol = 'oidc' ORDER BY created_at, id`, issuer)
}
