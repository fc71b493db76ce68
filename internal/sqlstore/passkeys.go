package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// Passkeys keep their binary values as text: the credential id and public
// key base64url (unpadded), the AAGUID hex, the transports comma-joined.

const passkeyColumns = `id, user_id, credential_id, public_key, sign_count, transports, aaguid, attestation,
	user_verified, backup_eligible, backed_up, name, created_at, last_used_at`

var b64 = base64.RawURLEncoding

// CreatePasskey implements identity.Store.
func (s *Identity) CreatePasskey(ctx context.Context, pk *identity.Passkey) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO passkeys (`+passkeyColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL)`,
		pk.ID, pk.UserID, b64.EncodeToString(pk.CredentialID), b64.EncodeToString(pk.PublicKey), int64(pk.SignCount),
		strings.Join(pk.Transports, ","), hex.EncodeToString(pk.AAGUID), pk.Attestation,
		pk.UserVerified, pk.BackupEligible, pk.BackedUp, pk.Name, micros(pk.CreatedAt))
	return s.db.dialect.translate(err)
}

// ListPasskeys implements identity.Store.
func (s *Identity) ListPasskeys(ctx context.Context, userID string) ([]identity.Passkey, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []identity.Passkey
	for rows.Next() {
		pk, err := scanPasskey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *pk)
	}
	return out, rows.Err()
}

// PasskeyByCredentialID implements identity.Store.
func (s *Identity) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*identity.Passkey, error) {
	pk, err := scanPasskey(s.r().QueryRowContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE credential_id = $1`,
		b64.EncodeToString(credentialID)))
	if err != nil {
		return nil, s.one(err)
	}
	return pk, nil
}

// PasskeyOwner implements identity.Store: one read where a usernameless
// sign-in made three (the passkey, its account, the account's default
// workspace with the account's role and the tool states there).
func (s *Identity) PasskeyOwner(ctx context.Context, credentialID []byte) (*identity.PasskeyAccount, error) {
	var p passkeyRow
	var u userRow
	var o nullOrg
	q := `SELECT ` + passkeyOwnerColumns + `, ` + s.orgRoleColumns() + `
		FROM passkeys p JOIN users u ON u.id = p.user_id
		LEFT JOIN orgs o ON o.id = u.default_org_id LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = u.id
		WHERE p.credential_id = $1`
	dest := append(append(p.dest(), u.dest()...), o.dest()...)
	if err := s.rKey().QueryRowContext(ctx, q, b64.EncodeToString(credentialID)).Scan(dest...); err != nil {
		return nil, s.one(err)
	}
	pk, err := p.get()
	if err != nil {
		return nil, err
	}
	home, role := o.get()
	return &identity.PasskeyAccount{Passkey: pk, User: u.get(), Home: home, HomeRole: role}, nil
}

// passkeyOwnerColumns are PasskeyOwner's passkey and account columns,
// qualified once rather than at every sign-in.
var passkeyOwnerColumns = qualify("p.", passkeyColumns) + `, ` + qualify("u.", userRead)

// qualify prefixes each of the comma-separated columns with table.
func qualify(table, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = table + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// RenamePasskey implements identity.Store.
func (s *Identity) RenamePasskey(ctx context.Context, userID, id, name string) (*identity.Passkey, error) {
	pk, err := scanPasskey(s.w().QueryRowContext(ctx, `UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2
		RETURNING `+passkeyColumns, id, userID, name))
	if err != nil {
		return nil, s.one(err)
	}
	return pk, nil
}

// DeletePasskey implements identity.Store.
func (s *Identity) DeletePasskey(ctx context.Context, userID, id string) error {
	res, err := s.w().ExecContext(ctx, `DELETE FROM passkeys WHERE id = $1 AND user_id = $2`, id, userID)
	return s.affected(res, err)
}

// DeleteUserPasskeys implements identity.Store.
func (s *Identity) DeleteUserPasskeys(ctx context.Context, userID string) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM passkeys WHERE user_id = $1`, userID))
}

// DeleteUserCeremonies implements identity.Store.
func (s *Identity) DeleteUserCeremonies(ctx context.Context, userID string) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE user_id = $1`, userID))
}

// SessionFirstPasskey implements identity.Store.
func (s *Identity) SessionFirstPasskey(ctx context.Context, sessionID string) (string, error) {
	var id sql.NullString
	if err := s.r().QueryRowContext(ctx, `SELECT first_passkey_id FROM sessions WHERE id = $1`, sessionID).Scan(&id); err != nil {
		return "", s.one(err)
	}
	return id.String, nil
}

// UsePasskey implements identity.Store: one conditional UPDATE, so two
// assertions with one count cannot both count.
func (s *Identity) UsePasskey(ctx context.Context, id string, count uint32, verified, backedUp bool, at time.Time) error {
	res, err := s.w().ExecContext(ctx, `UPDATE passkeys SET sign_count = $2, user_verified = $3, backed_up = $4, last_used_at = $5
		WHERE id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))`, id, int64(count), verified, backedUp, micros(at))
	return s.affected(res, err)
}

// affected is ErrNotFound when a write changed no row.
func (s *Identity) affected(res sql.Result, err error) error {
	if err != nil {
		return s.db.dialect.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return s.one(sql.ErrNoRows)
	}
	return nil
}

// CreateCeremony implements identity.Store.
func (s *Identity) CreateCeremony(ctx context.Context, c *identity.Ceremony) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO passkey_ceremonies (id_hash, kind, user_id, session, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, c.IDHash, c.Kind, nullString(c.UserID), string(c.Session), micros(c.ExpiresAt))
	return s.db.dialect.translate(err)
}

// TakeCeremony implements identity.Store: DELETE … RETURNING, so the row
// is used once on either database.
func (s *Identity) TakeCeremony(ctx context.Context, idHash, kind string, at time.Time) (*identity.Ceremony, error) {
	return s.ceremony(s.w().QueryRowContext(ctx, `DELETE FROM passkey_ceremonies WHERE id_hash = $1 AND kind = $2 AND expires_at > $3
		RETURNING user_id, session, expires_at`, idHash, kind, micros(at)), idHash, kind)
}

// UseCeremony implements identity.Store: a DELETE whose conditions hold
// the session, so a sign-in's shared transaction reads nothing back.
func (s *Identity) UseCeremony(ctx context.Context, idHash, kind string, at time.Time, session []byte) error {
	q := `DELETE FROM passkey_ceremonies WHERE id_hash = $1 AND kind = $2 AND expires_at > $3`
	args := []any{idHash, kind, micros(at)}
	if session != nil {
		q += ` AND user_id IS NULL AND session = $4`
		args = append(args, string(session))
	}
	return s.affected(s.w().ExecContext(ctx, q, args...))
}

// PeekCeremony implements identity.Store: a read, so the check of an
// assertion holds no writer; the finish takes the ceremony in its
// transaction.
func (s *Identity) PeekCeremony(ctx context.Context, idHash, kind string, at time.Time) (*identity.Ceremony, error) {
	return s.ceremony(s.r().QueryRowContext(ctx, `SELECT user_id, session, expires_at FROM passkey_ceremonies
		WHERE id_hash = $1 AND kind = $2 AND expires_at > $3`, idHash, kind, micros(at)), idHash, kind)
}

// ceremony scans a row of user_id, session, expires_at.
func (s *Identity) ceremony(row *sql.Row, idHash, kind string) (*identity.Ceremony, error) {
	c := identity.Ceremony{IDHash: idHash, Kind: kind}
	var user sql.NullString
	var session string
	var expires int64
	if err := row.Scan(&user, &session, &expires); err != nil {
		return nil, s.one(err)
	}
	c.UserID, c.Session, c.ExpiresAt = user.String, []byte(session), fromMicros(expires)
	return &c, nil
}

// PurgeCeremonies implements identity.Store.
func (s *Identity) PurgeCeremonies(ctx context.Context, at time.Time) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE expires_at <= $1`, micros(at))
	return s.db.dialect.translate(err)
}

// scanPasskey reads a row of passkeyColumns.
func scanPasskey(row interface{ Scan(...any) error }) (*identity.Passkey, error) {
	var r passkeyRow
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.get()
}

// passkeyRow receives passkeyColumns, alone or beside other columns.
type passkeyRow struct {
	pk                              identity.Passkey
	credID, pub, transports, aaguid string
	count, created                  int64
	used                            sql.NullInt64
}

func (r *passkeyRow) dest() []any {
	pk := &r.pk
	return []any{&pk.ID, &pk.UserID, &r.credID, &r.pub, &r.count, &r.transports, &r.aaguid, &pk.Attestation,
		&pk.UserVerified, &pk.BackupEligible, &pk.BackedUp, &pk.Name, &r.created, &r.used}
}

func (r *passkeyRow) get() (*identity.Passkey, error) {
	pk := r.pk
	var err error
	if pk.CredentialID, err = b64.DecodeString(r.credID); err != nil {
		return nil, err
	}
	if pk.PublicKey, err = b64.DecodeString(r.pub); err != nil {
		return nil, err
	}
	if pk.AAGUID, err = hex.DecodeString(r.aaguid); err != nil {
		return nil, err
	}
	if r.transports != "" {
		pk.Transports = strings.Split(r.transports, ",")
	}
	pk.SignCount, pk.CreatedAt, pk.LastUsedAt = uint32(r.count), fromMicros(r.created), fromNullMicros(r.used)
	return &pk, nil
}
