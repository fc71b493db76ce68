package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The second factors of issue 13: TOTP factors, recovery codes and the
// per-account attempt counter. The single-use rules are conditional
// writes, so they hold across instances.

const factorColumns = `id, user_id, kind, secret, last_step, created_at, confirmed_at`

func scanFactor(row interface{ Scan(...any) error }) (*identity.Factor, error) {
	var f identity.Factor
	var created int64
	var confirmed sql.NullInt64
	if err := row.Scan(&f.ID, &f.UserID, &f.Kind, &f.Secret, &f.LastStep, &created, &confirmed); err != nil {
		return nil, err
	}
	f.CreatedAt, f.ConfirmedAt = fromMicros(created), fromNullMicros(confirmed)
	return &f, nil
}

// SetSessionLevel implements identity.Store.
func (s *Identity) SetSessionLevel(ctx context.Context, id string, lvl gatehouse.Assurance) error {
	return affected(s.w().ExecContext(ctx, `UPDATE sessions SET aal = $2, amr = $3, mfa_pending = $4 WHERE id = $1 AND revoked_at IS NULL`,
		id, aalOf(lvl), strings.Join(lvl.AMR, " "), lvl.Pending))
}

// UserFactors implements identity.Store.
func (s *Identity) UserFactors(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT DISTINCT kind FROM mfa_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL
		UNION ALL SELECT 'recovery_code' FROM (SELECT 1 FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL LIMIT 1) c`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var kinds []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(kinds) == 1 && kinds[0] == identity.FactorRecoveryCode {
		return nil, nil // codes left behind by no factor are no factor
	}
	// The kinds first, recovery codes last: the order the step offers them.
	for i, k := range kinds {
		if k == identity.FactorRecoveryCode && i != len(kinds)-1 {
			kinds = append(append(kinds[:i:i], kinds[i+1:]...), k)
			break
		}
	}
	return kinds, nil
}

// CreateFactor implements identity.Store.
func (s *Identity) CreateFactor(ctx context.Context, f *identity.Factor) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO mfa_factors (`+factorColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		f.ID, f.UserID, f.Kind, f.Secret, f.LastStep, micros(f.CreatedAt), nullMicros(f.ConfirmedAt))
	return s.db.dialect.translate(err)
}

// FactorByID implements identity.Store.
func (s *Identity) FactorByID(ctx context.Context, userID, id string) (*identity.Factor, error) {
	f, err := scanFactor(s.r().QueryRowContext(ctx, `SELECT `+factorColumns+` FROM mfa_factors WHERE id = $1 AND user_id = $2`, id, userID))
	return f, s.one(err)
}

// ConfirmedFactor implements identity.Store.
func (s *Identity) ConfirmedFactor(ctx context.Context, userID, kind string) (*identity.Factor, error) {
	f, err := scanFactor(s.r().QueryRowContext(ctx, `SELECT `+factorColumns+` FROM mfa_factors
		WHERE user_id = $1 AND kind = $2 AND confirmed_at IS NOT NULL ORDER BY created_at, id LIMIT 1`, userID, kind))
	return f, s.one(err)
}

// ListFactors implements identity.Store.
func (s *Identity) ListFactors(ctx context.Context, userID string) ([]identity.Factor, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+factorColumns+` FROM mfa_factors WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []identity.Factor
	for rows.Next() {
		f, err := scanFactor(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

// UseFactorStep implements identity.Store.
func (s *Identity) UseFactorStep(ctx context.Context, id string, step int64, confirm *time.Time) error {
	if confirm != nil {
		return affected(s.w().ExecContext(ctx, `UPDATE mfa_factors SET last_step = $2, confirmed_at = $3
			WHERE id = $1 AND last_step < $2 AND confirmed_at IS NULL`, id, step, micros(*confirm)))
	}
	return affected(s.w().ExecContext(ctx, `UPDATE mfa_factors SET last_step = $2
		WHERE id = $1 AND last_step < $2 AND confirmed_at IS NOT NULL`, id, step))
}

// DeleteFactor implements identity.Store.
func (s *Identity) DeleteFactor(ctx context.Context, userID, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM mfa_factors WHERE id = $1 AND user_id = $2`, id, userID))
}

// DeleteUnconfirmedFactors implements identity.Store.
func (s *Identity) DeleteUnconfirmedFactors(ctx context.Context, userID string) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM mfa_factors WHERE user_id = $1 AND confirmed_at IS NULL`, userID)
	return err
}

// DeleteUserFactors implements identity.Store.
func (s *Identity) DeleteUserFactors(ctx context.Context, userID string) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM mfa_factors WHERE user_id = $1`, userID))
}

// DeleteRecoveryCodes implements identity.Store.
func (s *Identity) DeleteRecoveryCodes(ctx context.Context, userID string) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1`, userID))
}

// ReplaceRecoveryCodes implements identity.Store.
func (s *Identity) ReplaceRecoveryCodes(ctx context.Context, userID string, hashes []string, at time.Time) error {
	if _, err := s.w().ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1`, userID); err != nil {
		return err
	}
	for _, h := range hashes {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES ($1, $2, $3)`,
			h, userID, micros(at)); err != nil {
			return s.db.dialect.translate(err)
		}
	}
	return nil
}

// UseRecoveryCode implements identity.Store.
func (s *Identity) UseRecoveryCode(ctx context.Context, userID, hash string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE recovery_codes SET used_at = $3 WHERE code_hash = $1 AND user_id = $2 AND used_at IS NULL`,
		hash, userID, micros(at)))
}

// RecoveryCodesLeft implements identity.Store.
func (s *Identity) RecoveryCodesLeft(ctx context.Context, userID string) (int, error) {
	var n int
	err := s.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`, userID).Scan(&n)
	return n, err
}

// MFAAttempt implements identity.Store: one upsert counts the attempt and
// reads the count, so concurrent attempts are all counted.
func (s *Identity) MFAAttempt(ctx context.Context, userID string, at, since time.Time) (int, time.Time, error) {
	var n int
	var start int64
	err := s.w().QueryRowContext(ctx, `INSERT INTO mfa_attempts (user_id, failures, window_start) VALUES ($1, 1, $2)
		ON CONFLICT (user_id) DO UPDATE SET
			failures = CASE WHEN mfa_attempts.window_start <= $3 THEN 1 ELSE mfa_attempts.failures + 1 END,
			window_start = CASE WHEN mfa_attempts.window_start <= $3 THEN $2 ELSE mfa_attempts.window_start END
		RETURNING failures, window_start`, userID, micros(at), micros(since)).Scan(&n, &start)
	return n, fromMicros(start), err
}

// ClearMFAAttempts implements identity.Store.
func (s *Identity) ClearMFAAttempts(ctx context.Context, userID string) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM mfa_attempts WHERE user_id = $1`, userID)
	return err
}
