package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse"
)

// SettingOrCreate implements identity.Store.
func (s *Identity) SettingOrCreate(ctx context.Context, key, value string) (string, error) {
	if _, err := s.w().ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`, key, value); err != nil {
		return "", s.db.dialect.translate(err)
	}
	var got string
	err := s.w().QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&got)
	return got, s.one(err)
}

const userColumns = `id, email, email_key, name, avatar_url, password_hash, email_verified, default_org_id, created_at, updated_at`

// userRead is what scanUser reads: userColumns and disabled_at.
const userRead = userColumns + `, disabled_at, language`

func scanUser(row interface{ Scan(...any) error }) (*gatehouse.User, error) {
	var r userRow
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.get(), nil
}

// userRow receives userRead, alone or beside other columns.
type userRow struct {
	u                gatehouse.User
	defOrg, lang     sql.NullString
	created, updated int64
	disabled         sql.NullInt64
}

func (r *userRow) dest() []any {
	u := &r.u
	return []any{&u.ID, &u.Email, &u.EmailKey, &u.Name, &u.AvatarURL, &u.PasswordHash, &u.EmailVerified, &r.defOrg, &r.created, &r.updated,
		&r.disabled, &r.lang}
}

func (r *userRow) get() *gatehouse.User {
	u := r.u
	u.DefaultOrgID, u.Language = r.defOrg.String, r.lang.String
	u.CreatedAt, u.UpdatedAt, u.DisabledAt = fromMicros(r.created), fromMicros(r.updated), fromNullMicros(r.disabled)
	return &u
}

// CreateUser implements identity.Store.
func (s *Identity) CreateUser(ctx context.Context, u *gatehouse.User) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		u.ID, u.Email, u.EmailKey, u.Name, u.AvatarURL, u.PasswordHash, u.EmailVerified, nullString(u.DefaultOrgID), micros(u.CreatedAt), micros(u.UpdatedAt)))
}

// UserByID implements workspace.Store.
func (s *Workspace) UserByID(ctx context.Context, id string) (*gatehouse.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userRead+` FROM users WHERE id = $1`, id))
	return u, s.one(err)
}

// UserByEmail implements identity.Store and workspace.Tables.
func (s *Workspace) UserByEmail(ctx context.Context, key string) (*gatehouse.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userRead+` FROM users WHERE email_key = $1`, key))
	return u, s.one(err)
}

// UpdateUser implements identity.Store: it writes the profile fields
// (with the language) and the verification flag.
func (s *Identity) UpdateUser(ctx context.Context, u *gatehouse.User) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET name = $2, avatar_url = $3, email_verified = $4, updated_at = $5, language = $6 WHERE id = $1`,
		u.ID, u.Name, u.AvatarURL, u.EmailVerified, micros(u.UpdatedAt), nullString(u.Language)))
}

// SetUserEmail implements identity.Store: the address and its key change
// only while no other account holds the key.
func (s *Identity) SetUserEmail(ctx context.Context, userID, email, key string, verified bool, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET email = $2, email_key = $3, email_verified = $4, updated_at = $5
		WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM users o WHERE o.email_key = $3 AND o.id <> $1)`,
		userID, email, key, verified, micros(at)))
}

// SetUserDisabled implements identity.Store: at nil enables the account.
func (s *Identity) SetUserDisabled(ctx context.Context, userID string, at *time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET disabled_at = $2 WHERE id = $1`, userID, nullMicros(at)))
}

// ReplacePasswordHash implements identity.Store.
func (s *Identity) ReplacePasswordHash(ctx context.Context, userID, old, hash string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2`, userID, old, hash))
}

// SetDefaultOrg implements workspace.Store.
func (s *Workspace) SetDefaultOrg(ctx context.Context, userID, orgID string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE users SET default_org_id = $2 WHERE id = $1`, userID, nullString(orgID)))
}

// ConfirmEmail implements workspace.Tables: one conditional UPDATE, so
// an address changed or confirmed since it was read is left alone.
func (s *Workspace) ConfirmEmail(ctx context.Context, userID, emailKey string, at time.Time) (bool, error) {
	res, err := s.w().ExecContext(ctx, `UPDATE users SET email_verified = $3, updated_at = $4
		WHERE id = $1 AND email_key = $2 AND email_verified = $5`, userID, emailKey, true, micros(at), false)
	if err != nil {
		return false, s.db.dialect.translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// LockUser implements workspace.Store.
func (s *Workspace) LockUser(ctx context.Context, userID string) error {
	var id string
	err := s.w().QueryRowContext(ctx, `SELECT id FROM users WHERE id = $1`+s.db.dialect.forUpdate, userID).Scan(&id)
	return s.one(err)
}

// PinUser implements identity.Store.
func (s *Identity) PinUser(ctx context.Context, userID string) (*gatehouse.User, error) {
	u, err := scanUser(s.w().QueryRowContext(ctx, `SELECT `+userRead+` FROM users WHERE id = $1`+s.db.dialect.forKeyShare, userID))
	return u, s.one(err)
}

// ListUsers returns up to limit accounts in the order they were created,
// after the account afterID ("" from the first): gatehouse users list.
func (s *Identity) ListUsers(ctx context.Context, afterID string, limit int) ([]gatehouse.User, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+userRead+` FROM users
		WHERE $1 = '' OR (created_at, id) > (SELECT created_at, id FROM users WHERE id = $1)
		ORDER BY created_at, id LIMIT $2`, afterID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []gatehouse.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *u)
	}
	return out, rows.Err()
}
