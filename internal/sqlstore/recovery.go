package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// PeekEmailToken implements identity.Store: a read, so a request refused
// after it (a password the policy refuses) leaves the token usable.
func (s *Identity) PeekEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*identity.EmailToken, error) {
	t := identity.EmailToken{Hash: hash, Purpose: purpose}
	var user sql.NullString
	var created, expires int64
	err := s.r().QueryRowContext(ctx, `SELECT email, user_id, created_at, expires_at FROM email_tokens
		WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3`, hash, purpose, micros(at)).
		Scan(&t.Email, &user, &created, &expires)
	if err != nil {
		return nil, s.one(err)
	}
	t.UserID, t.CreatedAt, t.ExpiresAt = user.String, fromMicros(created), fromMicros(expires)
	return &t, nil
}

// EmailTokenAny implements identity.Store.
func (s *Identity) EmailTokenAny(ctx context.Context, hash, purpose string) (*identity.EmailToken, error) {
	t := identity.EmailToken{Hash: hash, Purpose: purpose}
	var user sql.NullString
	var used sql.NullInt64
	var created, expires int64
	err := s.r().QueryRowContext(ctx, `SELECT email, user_id, created_at, expires_at, used_at FROM email_tokens
		WHERE token_hash = $1 AND purpose = $2`, hash, purpose).
		Scan(&t.Email, &user, &created, &expires, &used)
	if err != nil {
		return nil, s.one(err)
	}
	t.UserID, t.CreatedAt, t.ExpiresAt = user.String, fromMicros(created), fromMicros(expires)
	if used.Valid {
		at := fromMicros(used.Int64)
		t.UsedAt = &at
	}
	return &t, nil
}

// SpendEmailTokens implements identity.Store.
func (s *Identity) SpendEmailTokens(ctx context.Context, userID, purpose string, at time.Time) error {
	_, err := s.w().ExecContext(ctx, `UPDATE email_tokens SET used_at = $3
		WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3`, userID, purpose, micros(at))
	return err
}
