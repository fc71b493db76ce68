package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

const keyColumns = `id, kind, user_id, org_id, name, role, tools, prefix, key_hash, created_by, created_at, expires_at, last_used_at, revoked_at, aal`

func scanKey(row interface{ Scan(...any) error }) (*workspace.APIKey, error) {
	var k workspace.APIKey
	var user, role, tools, createdBy sql.NullString
	var created int64
	var expires, used, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.Kind, &user, &k.OrgID, &k.Name, &role, &tools, &k.Prefix, &k.Hash, &createdBy,
		&created, &expires, &used, &revoked, &k.AAL); err != nil {
		return nil, err
	}
	k.UserID, k.Role, k.CreatedBy = user.String, role.String, createdBy.String
	if tools.Valid {
		if err := json.Unmarshal([]byte(tools.String), &k.Tools); err != nil {
			return nil, err
		}
	}
	k.CreatedAt, k.ExpiresAt, k.LastUsedAt, k.RevokedAt = fromMicros(created), fromNullMicros(expires), fromNullMicros(used), fromNullMicros(revoked)
	return &k, nil
}

// CreateAPIKey implements workspace.Store.
func (s *Workspace) CreateAPIKey(ctx context.Context, k *workspace.APIKey) error {
	tools, err := json.Marshal(k.Tools)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, NULL, $13)`,
		k.ID, k.Kind, nullString(k.UserID), k.OrgID, k.Name, nullString(k.Role), string(tools), k.Prefix, k.Hash, nullString(k.CreatedBy),
		micros(k.CreatedAt), nullMicros(k.ExpiresAt), keyLevel(k.AAL))
	return s.db.dialect.translate(err)
}

// keyLevel is the stored level of a key or grant: aal1 unless aal2.
func keyLevel(aal string) string {
	if aal == gatehouse.AAL2 {
		return aal
	}
	return gatehouse.AAL1
}

// APIKeyByHash implements identity.Store.
func (s *Identity) APIKeyByHash(ctx context.Context, hash string) (*workspace.APIKey, error) {
	k, err := scanKey(s.r().QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE key_hash = $1`, hash))
	return k, s.one(err)
}

// APIKeyByID implements workspace.Store.
func (s *Workspace) APIKeyByID(ctx context.Context, id string) (*workspace.APIKey, error) {
	k, err := scanKey(s.r().QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	return k, s.one(err)
}

// ListAPIKeys implements workspace.Store.
func (s *Workspace) ListAPIKeys(ctx context.Context, kind, userID, orgID string) ([]workspace.APIKey, error) {
	q := `SELECT ` + keyColumns + ` FROM api_keys WHERE kind = $1 AND revoked_at IS NULL AND `
	arg := userID
	if kind == workspace.KeyUser {
		q += `user_id = $2`
	} else {
		q += `org_id = $2`
		arg = orgID
	}
	rows, err := s.r().QueryContext(ctx, q+` ORDER BY created_at DESC, id DESC`, kind, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []workspace.APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

// RevokeAPIKey implements workspace.Store.
func (s *Workspace) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	return s.revoke(ctx, revocation.KindKey, at, `SELECT id AS subject, '' AS org_id FROM api_keys WHERE id = $1 AND revoked_at IS NULL`, []any{id},
		func(c conn) error {
			return affected(c.w().ExecContext(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, micros(at)))
		})
}

// RevokeUserKeys implements identity.Store.
func (s *Identity) RevokeUserKeys(ctx context.Context, userID string, at time.Time) (int, error) {
	var n int
	err := s.revoke(ctx, revocation.KindKey, at, `SELECT id AS subject, '' AS org_id FROM api_keys WHERE (user_id = $1 OR created_by = $1) AND revoked_at IS NULL`,
		[]any{userID}, func(c conn) (err error) {
			n, err = changed(c.w().ExecContext(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE (user_id = $1 OR created_by = $1) AND revoked_at IS NULL`,
				userID, micros(at)))
			return err
		})
	return n, err
}

// RevokePersonalKeys implements identity.Store.
func (s *Identity) RevokePersonalKeys(ctx context.Context, userID string, at time.Time) (int, error) {
	var n int
	err := s.revoke(ctx, revocation.KindKey, at, `SELECT id AS subject, '' AS org_id FROM api_keys WHERE user_id = $1 AND kind = $2 AND revoked_at IS NULL`,
		[]any{userID, workspace.KeyUser}, func(c conn) (err error) {
			n, err = changed(c.w().ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE user_id = $1 AND kind = $2 AND revoked_at IS NULL`,
				userID, workspace.KeyUser, micros(at)))
			return err
		})
	return n, err
}

// DisableUserWebhooks implements identity.Store.
func (s *Identity) DisableUserWebhooks(ctx context.Context, userID string, at time.Time) (int, error) {
	return changed(s.w().ExecContext(ctx, `UPDATE webhooks SET active = FALSE, updated_at = $2 WHERE created_by = $1 AND active`, userID, micros(at)))
}

// TouchAPIKey implements identity.Store.
func (s *Identity) TouchAPIKey(ctx context.Context, id string, at, staleBefore time.Time) error {
	_, err := s.w().ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`,
		id, micros(at), micros(staleBefore))
	return err
}
