package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
)

// CreateDocument implements sign.Store.
func (s *Sign) CreateDocument(ctx context.Context, d *sign.Document) error {
	if _, err := s.w().ExecContext(ctx, `INSERT INTO sign_documents (id, org_id, owner_id, name, message, status, file, size, pages, created_at, updated_at, expires_at,
		auto_remind_days) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, d.ID, d.OrgID, d.OwnerID, d.Name, d.Message, d.Status,
		base64.StdEncoding.EncodeToString(d.File), d.Size, d.Pages, micros(d.Created), micros(d.Modified), nullMicros(d.ExpiresAt),
		d.AutoRemindDays); err != nil {
		return err
	}
	for _, r := range d.Recipients {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO sign_recipients (id, document_id, name, email, role, order_index, status, token)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ID, d.ID, r.Name, r.Email, r.Role, r.OrderIndex, r.Status, r.Token); err != nil {
			return err
		}
	}
	for _, f := range d.Fields {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO sign_fields (id, document_id, recipient_id, type, page, x, y, width, height, required, label, value, position)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, f.ID, d.ID, nullString(f.RecipientID), f.Type, f.Page,
			f.X, f.Y, f.Width, f.Height, f.Required, f.Label, f.Value, f.Position); err != nil {
			return err
		}
	}
	return nil
}

const documentColumns = `d.id, d.org_id, d.owner_id, d.name, d.message, d.status, d.size, d.pages, d.void_reason,
	d.created_at, d.updated_at, d.sent_at, d.completed_at, d.voided_at, d.declined_at, d.expires_at, d.expired_at,
	d.auto_remind_days, d.last_reminded_at, d.legal_hold, d.purged_at`

func scanDocument(row interface{ Scan(...any) error }, extra ...any) (*sign.Document, error) {
	var d sign.Document
	var created, updated int64
	var sent, completed, voided, declined, expires, expired, reminded, purged sql.NullInt64
	dest := []any{&d.ID, &d.OrgID, &d.OwnerID, &d.Name, &d.Message, &d.Status, &d.Size, &d.Pages, &d.VoidReason,
		&created, &updated, &sent, &completed, &voided, &declined, &expires, &expired, &d.AutoRemindDays, &reminded,
		&d.LegalHold, &purged}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	d.Created, d.Modified = fromMicros(created), fromMicros(updated)
	d.SentAt, d.CompletedAt, d.VoidedAt, d.DeclinedAt = fromNullMicros(sent), fromNullMicros(completed), fromNullMicros(voided), fromNullMicros(declined)
	d.ExpiresAt, d.ExpiredAt = fromNullMicros(expires), fromNullMicros(expired)
	d.LastRemindedAt = fromNullMicros(reminded)
	d.PurgedAt = fromNullMicros(purged)
	return &d, nil
}

// Document implements sign.Store.
func (s *Sign) Document(ctx context.Context, orgID, id string, withFile, forUpdate bool) (*sign.Document, error) {
	lock := ""
	if forUpdate {
		lock = s.db.dialect.forUpdate
	}
	var file string
	// The org is checked in a subquery so FOR UPDATE locks only the document.
	q := `SELECT ` + documentColumns + `, CASE WHEN $3 THEN d.file ELSE '' END FROM sign_documents d
		WHERE d.id = $1 AND d.org_id = $2 AND EXISTS (SELECT 1 FROM orgs o WHERE o.id = d.org_id AND o.deleted_at IS NULL)` + lock
	d, err := scanDocument(s.r().QueryRowContext(ctx, q, id, orgID, withFile), &file)
	if err != nil {
		return nil, s.one(err)
	}
	if withFile {
		if d.File, err = base64.StdEncoding.DecodeString(file); err != nil {
			return nil, err
		}
	}
	return d, s.fillDocument(ctx, d)
}

// fillDocument reads a document's recipients and fields.
func (s *Sign) fillDocument(ctx context.Context, d *sign.Document) error {
	rows, err := s.r().QueryContext(ctx, `SELECT id, name, email, role, order_index, status, token, viewed_at, signed_at, declined_at, decline_reason
		FROM sign_recipients WHERE document_id = $1 ORDER BY order_index, id`, d.ID)
	if err != nil {
		return err
	}
	d.Recipients = []*sign.Recipient{}
	for rows.Next() {
		r := &sign.Recipient{DocumentID: d.ID}
		var viewed, signed, declined sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Name, &r.Email, &r.Role, &r.OrderIndex, &r.Status, &r.Token, &viewed, &signed, &declined, &r.DeclineReason); err != nil {
			rows.Close()
			return err
		}
		r.ViewedAt, r.SignedAt, r.DeclinedAt = fromNullMicros(viewed), fromNullMicros(signed), fromNullMicros(declined)
		d.Recipients = append(d.Recipients, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = s.r().QueryContext(ctx, `SELECT id, recipient_id, type, page, x, y, width, height, required, label, value, position
		FROM sign_fields WHERE document_id = $1 ORDER BY position, id`, d.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	d.Fields = []*sign.Field{}
	for rows.Next() {
		f := &sign.Field{DocumentID: d.ID}
		var recipient, value sql.NullString
		if err := rows.Scan(&f.ID, &recipient, &f.Type, &f.Page, &f.X, &f.Y, &f.Width, &f.Height, &f.Required, &f.Label, &value, &f.Position); err != nil {
			return err
		}
		f.RecipientID = recipient.String
		if value.Valid {
			v := value.String
			f.Value = &v
		}
		d.Fields = append(d.Fields, f)
	}
	return rows.Err()
}

// ListDocuments implements sign.Store.
func (s *Sign) ListDocuments(ctx context.Context, orgID string) ([]*sign.Document, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+documentColumns+` FROM sign_documents d
		JOIN orgs o ON o.id = d.org_id AND o.deleted_at IS NULL WHERE d.org_id = $1 ORDER BY d.created_at DESC, d.id DESC`, orgID)
	if err != nil {
		return nil, err
	}
	var out []*sign.Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, d := range out {
		if err := s.fillDocument(ctx, d); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = []*sign.Document{}
	}
	return out, nil
}

// RecipientByToken implements sign.Store.
func (s *Sign) RecipientByToken(ctx context.Context, token string) (*sign.Document, *sign.Recipient, error) {
	var docID, orgID string
	err := s.r().QueryRowContext(ctx, `SELECT d.id, d.org_id FROM sign_recipients r JOIN sign_documents d ON d.id = r.document_id
		JOIN orgs o ON o.id = d.org_id AND o.deleted_at IS NULL WHERE r.token = $1 AND d.purged_at IS NULL`, token).Scan(&docID, &orgID)
	if err != nil {
		return nil, nil, s.one(err)
	}
	d, err := s.Document(ctx, orgID, docID, false, true)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range d.Recipients {
		if r.Token == token {
			return d, r, nil
		}
	}
	return nil, nil, gatehouse.ErrNotFound
}

// UpdateDocument implements sign.Store.
func (s *Sign) UpdateDocument(ctx context.Context, d *sign.Document) error {
	return affected(s.w().ExecContext(ctx, `UPDATE sign_documents SET status = $2, void_reason = $3, updated_at = $4, sent_at = $5,
		completed_at = $6, voided_at = $7, declined_at = $8 WHERE id = $1`, d.ID, d.Status, d.VoidReason, micros(d.Modified),
		nullMicros(d.SentAt), nullMicros(d.CompletedAt), nullMicros(d.VoidedAt), nullMicros(d.DeclinedAt)))
}

// UpdateRecipient implements sign.Store.
func (s *Sign) UpdateRecipient(ctx context.Context, r *sign.Recipient) error {
	return affected(s.w().ExecContext(ctx, `UPDATE sign_recipients SET status = $2, viewed_at = $3, signed_at = $4, declined_at = $5,
		decline_reason = $6 WHERE id = $1`, r.ID, r.Status, nullMicros(r.ViewedAt), nullMicros(r.SignedAt), nullMicros(r.DeclinedAt), r.DeclineReason))
}

// SetFieldValue implements sign.Store.
func (s *Sign) SetFieldValue(ctx context.Context, fieldID string, value *string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE sign_fields SET value = $2 WHERE id = $1`, fieldID, value))
}

// DeleteField implements sign.Store.
func (s *Sign) DeleteField(ctx context.Context, documentID, fieldID string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM sign_fields WHERE id = $1 AND document_id = $2`, fieldID, documentID))
}

// ExpiringDocuments implements sign.Store.
func (s *Sign) ExpiringDocuments(ctx context.Context, now time.Time, limit int) ([][2]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, org_id FROM sign_documents WHERE status = $1 AND expires_at <= $2
		ORDER BY expires_at LIMIT $3`, sign.Pending, micros(now), limit)
	return idPairs(rows, err)
}

// ExpireDocument implements sign.Store: the WHERE on status makes the
// change once, whoever runs it first.
func (s *Sign) ExpireDocument(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.w().ExecContext(ctx, `UPDATE sign_documents SET status = $2, expired_at = $3, updated_at = $3
		WHERE id = $1 AND status = $4`, id, sign.Expired, micros(now), sign.Pending)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
