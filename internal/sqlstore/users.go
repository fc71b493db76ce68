package sqlstore

import (
	"context"
	"database/sql"

	"github.com/gatehouse/gatehouse/internal/accounts"
)

// SettingOrCreate implements accounts.Store.
func (s *Accounts) SettingOrCreate(ctx context.Context, key, value string) (string, error) {
	if _, err := s.w().ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`, key, value); err != nil {
		return "", s.db.dialect.translate(err)
	}
	var got string
	err := s.w().QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&got)
	return got, s.one(err)
}

const userColumns = `id, email, email_key, name, avatar_url, password_hash, email_verified, default_org_id, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (*accounts.User, error) {
	var u accounts.User
	var defOrg sql.NullString
	var created, updated int64
	if err := row.Scan(&u.ID, &u.Email, &u.EmailKey, &u.Name, &u.AvatarURL, &u.PasswordHash, &u.EmailVerified, &defOrg, &created, &updated); err != nil {
		return nil, err
	}
	u.DefaultOrgID = defOrg.String
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &u, nil
}

// CreateUser implements accounts.Store.
func (s *Accounts) CreateUser(ctx context.Context, u *accounts.User) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		u.ID, u.Email, u.EmailKey, u.Name, u.AvatarURL, u.PasswordHash, u.EmailVerified, nullString(u.DefaultOrgID), micros(u.CreatedAt), micros(u.UpdatedAt)))
}

// UserByID implements accounts.Store.
func (s *Accounts) UserByID(ctx context.Context, id string) (*accounts.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return u, s.one(err)
}

// UserByEmail implements accounts.Store.
func (s *Accounts) UserByEmail(ctx context.Context, key string) (*accounts.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = $1`, key))
	return u, s.one(err)
}

// UpdateUser implements accounts.Store: it writes the profile fields and the
// verification flag.
func (s *Accounts) UpdateUser(ctx context.Context, u *accounts.User) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET name = $2, avatar_url = $3, email_verified = $4, updated_at = $5 WHERE id = $1`,
		u.ID, u.Name, u.AvatarURL, u.EmailVerified, micros(u.UpdatedAt)))
}

// ReplacePasswordHash implements accounts.Store.
func (s *Accounts) ReplacePasswordHash(ctx context.Context, userID, old, hash string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2`, userID, old, hash))
}

// SetDefaultOrg implements accounts.Store.
func (s *Accounts) SetDefaultOrg(ctx context.Context, userID, orgID string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET default_org_id = $2 WHERE id = $1`, userID, nullString(orgID)))
}

// LockUser implements accounts.Store.
func (s *Accounts) LockUser(ctx context.Context, userID string) error {
	var id string
	err := s.w().QueryRowContext(ctx, `SELECT id FROM users WHERE id = $1`+s.db.dialect.forUpdate, userID).Scan(&id)
	return s.one(err)
}

// PinUser implements accounts.Store.
func (s *Accounts) PinUser(ctx context.Context, userID string) (*accounts.User, error) {
	u, err := scanUser(s.w().QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`+s.db.dialect.forKeyShare, userID))
	return u, s.one(err)
}
