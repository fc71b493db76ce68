package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// invitationSelect reads invitations with the inviter's name, live.
const invitationSelect = `SELECT i.id, i.org_id, i.kind, i.role, i.email, i.token_hash, i.inviter_id, COALESCE(u.name, ''),
	i.created_at, i.expires_at, i.used_at, i.revoked_at, i.mail_token_hash
	FROM invitations i LEFT JOIN users u ON u.id = i.inviter_id`

func scanInvitation(row interface{ Scan(...any) error }) (*workspace.Invitation, error) {
	var inv workspace.Invitation
	var email, inviter, mailHash sql.NullString
	var created int64
	var expires, used, revoked sql.NullInt64
	if err := row.Scan(&inv.ID, &inv.OrgID, &inv.Kind, &inv.Role, &email, &inv.TokenHash, &inviter, &inv.Inviter,
		&created, &expires, &used, &revoked, &mailHash); err != nil {
		return nil, err
	}
	inv.Email, inv.InviterID, inv.MailTokenHash = email.String, inviter.String, mailHash.String
	inv.CreatedAt, inv.ExpiresAt, inv.UsedAt, inv.RevokedAt = fromMicros(created), fromNullMicros(expires), fromNullMicros(used), fromNullMicros(revoked)
	return &inv, nil
}

// CreateInvitation implements workspace.Store.
func (s *Workspace) CreateInvitation(ctx context.Context, inv *workspace.Invitation) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO invitations (id, org_id, kind, role, email, token_hash, inviter_id, created_at, expires_at, used_at, revoked_at, mail_token_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, NULL, $10)`,
		inv.ID, inv.OrgID, inv.Kind, inv.Role, nullString(inv.Email), inv.TokenHash, nullString(inv.InviterID),
		micros(inv.CreatedAt), nullMicros(inv.ExpiresAt), nullString(inv.MailTokenHash))
	return s.db.dialect.translate(err)
}

// InvitationByHash implements workspace.Store: hash is either secret's,
// each found through its unique index.
func (s *Workspace) InvitationByHash(ctx context.Context, hash string) (*workspace.Invitation, error) {
	inv, err := scanInvitation(s.r().QueryRowContext(ctx, invitationSelect+` WHERE i.token_hash = $1 OR i.mail_token_hash = $1`, hash))
	if err != nil {
		return nil, s.one(err)
	}
	inv.ByMail = inv.MailTokenHash == hash
	return inv, nil
}

// UsableInvitations implements workspace.Store.
func (s *Workspace) UsableInvitations(ctx context.Context, orgID string, now time.Time) ([]*workspace.Invitation, error) {
	rows, err := s.r().QueryContext(ctx, invitationSelect+` WHERE i.org_id = $1 AND i.revoked_at IS NULL
		AND (i.expires_at IS NULL OR i.expires_at > $2) AND (i.kind = 'link' OR i.used_at IS NULL)
		ORDER BY i.created_at DESC, i.id DESC`, orgID, micros(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*workspace.Invitation
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, rows.Err()
}

// RevokeInvitation implements workspace.Store.
func (s *Workspace) RevokeInvitation(ctx context.Context, orgID, id string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE invitations SET revoked_at = $3 WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL`,
		orgID, id, micros(at)))
}

// UseInvitation implements workspace.Store.
func (s *Workspace) UseInvitation(ctx context.Context, id string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE invitations SET used_at = $2
		WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`, id, micros(at)))
}

// invitationMailWhere selects the email invitations of f's scope in its
// window; the literal kind matches the partial indexes of migration 00095.
func invitationMailWhere(f workspace.InvitationMailFilter) (string, []any) {
	col, id := "org_id", f.OrgID
	if f.InviterID != "" {
		col, id = "inviter_id", f.InviterID
	}
	return ` FROM invitations WHERE ` + col + ` = $1 AND kind = 'email' AND created_at > $2`, []any{id, micros(f.Since)}
}

// CountInvitationMails implements workspace.Store.
func (s *Workspace) CountInvitationMails(ctx context.Context, f workspace.InvitationMailFilter) (int, error) {
	where, args := invitationMailWhere(f)
	var n int
	err := s.r().QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&n)
	return n, err
}

// InvitationMailAt implements workspace.Store.
func (s *Workspace) InvitationMailAt(ctx context.Context, f workspace.InvitationMailFilter, offset int) (time.Time, error) {
	where, args := invitationMailWhere(f)
	var at int64
	err := s.r().QueryRowContext(ctx, `SELECT created_at`+where+` ORDER BY created_at LIMIT 1 OFFSET $3`, append(args, offset)...).Scan(&at)
	return fromMicros(at), s.one(err)
}
