package sqlstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Workspace applications (workspace/applications.go) and the client
// assertion ids the authorization server remembers (oauth).

const appColumns = `a.id, a.org_id, a.client_name, a.redirect_uris, a.post_logout_redirect_uris, a.scope, a.auth_method, a.jwks_uri, a.jwks,
	a.id_token_alg, a.backchannel_logout_uri, a.first_party, a.secret_hash, a.prev_secret_hash, a.prev_secret_until, a.created_by, a.created_at, a.updated_at`

func scanApp(row interface{ Scan(...any) error }) (*workspace.Application, error) {
	var a workspace.Application
	var redirects, postLogout string
	var prevUntil, created, updated int64
	if err := row.Scan(&a.ID, &a.OrgID, &a.ClientName, &redirects, &postLogout, &a.Scope, &a.AuthMethod, &a.JWKSURI, &a.JWKS,
		&a.IDTokenAlg, &a.BackchannelLogoutURI, &a.FirstParty, &a.SecretHash, &a.PrevSecretHash, &prevUntil, &a.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(redirects), &a.RedirectURIs); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(postLogout), &a.PostLogoutRedirectURIs); err != nil {
		return nil, err
	}
	if prevUntil != 0 {
		a.PrevSecretUntil = fromMicros(prevUntil)
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &a, nil
}

// appLists is the JSON of an application's two URI lists.
func appLists(a *workspace.Application) (string, string, error) {
	r, err := json.Marshal(nonNil(a.RedirectURIs))
	if err != nil {
		return "", "", err
	}
	p, err := json.Marshal(nonNil(a.PostLogoutRedirectURIs))
	return string(r), string(p), err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func untilMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

// CreateApplication implements workspace.Store.
func (s *Workspace) CreateApplication(ctx context.Context, a *workspace.Application) error {
	redirects, postLogout, err := appLists(a)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO applications (id, org_id, client_name, redirect_uris, post_logout_redirect_uris, scope,
		auth_method, jwks_uri, jwks, id_token_alg, backchannel_logout_uri, first_party, secret_hash, prev_secret_hash, prev_secret_until,
		created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		a.ID, a.OrgID, a.ClientName, redirects, postLogout, a.Scope, a.AuthMethod, a.JWKSURI, a.JWKS, a.IDTokenAlg, a.BackchannelLogoutURI,
		a.FirstParty, a.SecretHash, a.PrevSecretHash, untilMicros(a.PrevSecretUntil), a.CreatedBy, micros(a.CreatedAt), micros(a.UpdatedAt))
	return s.db.dialect.translate(err)
}

// ApplicationByID implements workspace.Store.
func (s *Workspace) ApplicationByID(ctx context.Context, id string) (*workspace.Application, error) {
	a, err := scanApp(s.r().QueryRowContext(ctx, `SELECT `+appColumns+` FROM applications a JOIN orgs o ON o.id = a.org_id
		WHERE a.id = $1 AND a.deleted_at IS NULL AND o.deleted_at IS NULL`, id))
	return a, s.one(err)
}

// ListApplications implements workspace.Store.
func (s *Workspace) ListApplications(ctx context.Context, orgID string) ([]workspace.Application, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+appColumns+` FROM applications a WHERE a.org_id = $1 AND a.deleted_at IS NULL
		ORDER BY a.created_at, a.id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []workspace.Application{}
	for rows.Next() {
		a, err := scanApp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// CountApplications implements workspace.Store.
func (s *Workspace) CountApplications(ctx context.Context, orgID string) (int, error) {
	var n int
	err := s.w().QueryRowContext(ctx, `SELECT COUNT(*) FROM applications WHERE org_id = $1 AND deleted_at IS NULL`, orgID).Scan(&n)
	return n, err
}

// UpdateApplication implements workspace.Store.
func (s *Workspace) UpdateApplication(ctx context.Context, a *workspace.Application) error {
	redirects, postLogout, err := appLists(a)
	if err != nil {
		return err
	}
	return affected(s.w().ExecContext(ctx, `UPDATE applications SET client_name = $2, redirect_uris = $3, post_logout_redirect_uris = $4,
		scope = $5, auth_method = $6, jwks_uri = $7, jwks = $8, id_token_alg = $9, backchannel_logout_uri = $10, first_party = $11,
		secret_hash = $12, prev_secret_hash = $13, prev_secret_until = $14, updated_at = $15 WHERE id = $1 AND deleted_at IS NULL`,
		a.ID, a.ClientName, redirects, postLogout, a.Scope, a.AuthMethod, a.JWKSURI, a.JWKS, a.IDTokenAlg, a.BackchannelLogoutURI,
		a.FirstParty, a.SecretHash, a.PrevSecretHash, untilMicros(a.PrevSecretUntil), micros(a.UpdatedAt)))
}

// DeleteApplication implements workspace.Store: the row is marked
// deleted, its secrets dropped, and every grant to the client revoked
// with its sessions (rows in revocations, so every instance refuses
// their access tokens within a poll).
func (s *Workspace) DeleteApplication(ctx context.Context, id, clientID string, at time.Time) error {
	err := affected(s.w().ExecContext(ctx, `UPDATE applications SET deleted_at = $2, secret_hash = '', prev_secret_hash = '', prev_secret_until = 0
		WHERE id = $1 AND deleted_at IS NULL`, id, micros(at)))
	if err != nil {
		return err
	}
	return s.revoke(ctx, revocation.KindSession, at, `SELECT s.id AS subject, '' AS org_id FROM sessions s JOIN oauth_grants g ON g.id = s.grant_id
		WHERE g.client_id = $1 AND s.revoked_at IS NULL`, []any{clientID}, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `UPDATE sessions SET revoked_at = $2 WHERE revoked_at IS NULL AND grant_id IN
			(SELECT id FROM oauth_grants WHERE client_id = $1)`, clientID, micros(at)); err != nil {
			return err
		}
		_, err := c.w().ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $2 WHERE client_id = $1 AND revoked_at IS NULL`, clientID, micros(at))
		return err
	})
}

// UseAssertion implements oauth.Store: the primary key of
// client_assertions makes a jti single use on every instance. Expired ids
// of the client are pruned on the way.
func (s *OAuth) UseAssertion(ctx context.Context, clientID, jti string, exp, now time.Time) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `DELETE FROM client_assertions WHERE client_id = $1 AND expires_at < $2`, clientID, micros(now)); err != nil {
			return err
		}
		return inserted(c.w().ExecContext(ctx, `INSERT INTO client_assertions (client_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			clientID, jti, micros(exp)))
	})
}
