package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

const formSelect = `SELECT f.id, f.org_id, f.name, f.autoresponder_enabled, f.autoresponder_subject, f.autoresponder_body, f.created_by, f.created_at,
		f.redirect_origins,
		(SELECT t.enabled FROM org_tools t WHERE t.org_id = f.org_id AND t.tool = 'forms')
	FROM forms f JOIN orgs o ON o.id = f.org_id AND o.deleted_at IS NULL`

func scanForm(row interface{ Scan(...any) error }) (*forms.Form, error) {
	var f forms.Form
	var created int64
	var switched sql.NullBool
	var origins string
	if err := row.Scan(&f.ID, &f.OrgID, &f.Name, &f.Autoresponder.Enabled, &f.Autoresponder.Subject, &f.Autoresponder.Body,
		&f.CreatedBy, &created, &origins, &switched); err != nil {
		return nil, err
	}
	f.RedirectOrigins = strings.Fields(origins)
	f.Created, f.ToolSwitch = fromMicros(created), nullBool(switched)
	return &f, nil
}

// OrgLive implements the tools' stores.
func (s conn) OrgLive(ctx context.Context, orgID string) (bool, error) {
	o, err := (&Workspace{s}).OrgByID(ctx, orgID)
	if err == gatehouse.ErrNotFound {
		return false, nil
	}
	return err == nil && o.DeletedAt == nil, err
}

// LiveForm implements forms.Store.
func (s *Forms) LiveForm(ctx context.Context, orgID, id string) (*forms.Form, error) {
	f, err := scanForm(s.r().QueryRowContext(ctx, formSelect+` WHERE f.id = $1 AND ($2 = '' OR f.org_id = $2)`, id, orgID))
	return f, s.one(err)
}

// CreateForm implements forms.Store.
func (s *Forms) CreateForm(ctx context.Context, f *forms.Form) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO forms (id, org_id, name, autoresponder_enabled, autoresponder_subject, autoresponder_body, created_by, created_at,
		redirect_origins)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		f.ID, f.OrgID, f.Name, f.Autoresponder.Enabled, f.Autoresponder.Subject, f.Autoresponder.Body, f.CreatedBy, micros(f.Created),
		strings.Join(f.RedirectOrigins, " "))
	return s.db.dialect.translate(err)
}

// UpdateForm implements forms.Store: the redirect origins, kept as one
// space-separated text (an origin holds no space).
func (s *Forms) UpdateForm(ctx context.Context, f *forms.Form) error {
	_, err := s.w().ExecContext(ctx, `UPDATE forms SET redirect_origins = $1 WHERE id = $2`, strings.Join(f.RedirectOrigins, " "), f.ID)
	return s.db.dialect.translate(err)
}

// ListForms implements forms.Store.
func (s *Forms) ListForms(ctx context.Context, orgID string) ([]*forms.Form, error) {
	rows, err := s.r().QueryContext(ctx, formSelect+` WHERE f.org_id = $1 ORDER BY f.created_at, f.id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*forms.Form{}
	for rows.Next() {
		f, err := scanForm(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// AddSubmission implements forms.Store.
func (s *Forms) AddSubmission(ctx context.Context, sub *forms.Submission) error {
	data, err := json.Marshal(sub.Data)
	if err != nil {
		return err
	}
	var autoresponded *int64
	if sub.AutorespondedAt != nil {
		at := micros(*sub.AutorespondedAt)
		autoresponded = &at
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO form_submissions (id, form_id, data, spam, created_at, autoresponded_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		sub.ID, sub.FormID, string(data), sub.Spam, micros(sub.Created), autoresponded)
	return s.db.dialect.translate(err)
}

// ListSubmissions implements forms.Store.
func (s *Forms) ListSubmissions(ctx context.Context, formID string) ([]*forms.Submission, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, form_id, data, spam, created_at FROM form_submissions
		WHERE form_id = $1 ORDER BY created_at DESC, id DESC`, formID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*forms.Submission{}
	for rows.Next() {
		var sub forms.Submission
		var data string
		var created int64
		if err := rows.Scan(&sub.ID, &sub.FormID, &data, &sub.Spam, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(data), &sub.Data); err != nil {
			return nil, err
		}
		sub.Created = fromMicros(created)
		out = append(out, &sub)
	}
	return out, rows.Err()
}

// AddDestination implements forms.Store.
func (s *Forms) AddDestination(ctx context.Context, d *forms.Destination) error {
	config, err := json.Marshal(map[string][]string{"to": d.To})
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO form_destinations (id, form_id, type, config, created_at) VALUES ($1, $2, $3, $4, $5)`,
		d.ID, d.FormID, d.Type, string(config), micros(d.Created))
	return s.db.dialect.translate(err)
}

// ListDestinations implements forms.Store.
func (s *Forms) ListDestinations(ctx context.Context, formID string) ([]*forms.Destination, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, form_id, type, config, created_at FROM form_destinations
		WHERE form_id = $1 ORDER BY created_at, id`, formID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*forms.Destination{}
	byID := map[string]*forms.Destination{}
	for rows.Next() {
		var d forms.Destination
		var config string
		var created int64
		if err := rows.Scan(&d.ID, &d.FormID, &d.Type, &config, &created); err != nil {
			return nil, err
		}
		var c struct {
			To []string `json:"to"`
		}
		if err := json.Unmarshal([]byte(config), &c); err != nil {
			return nil, err
		}
		d.To, d.Confirmed, d.Created = c.To, []string{}, fromMicros(created)
		out = append(out, &d)
		byID[d.ID] = &d
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, s.confirmedRecipients(ctx, formID, byID)
}

// confirmedRecipients fills in the confirmed addresses of a form's
// destinations.
func (s *Forms) confirmedRecipients(ctx context.Context, formID string, byID map[string]*forms.Destination) error {
	rows, err := s.r().QueryContext(ctx, `SELECT r.destination_id, r.email FROM form_recipients r
		JOIN form_destinations d ON d.id = r.destination_id
		WHERE d.form_id = $1 AND r.confirmed_at IS NOT NULL`, formID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, email string
		if err := rows.Scan(&id, &email); err != nil {
			return err
		}
		if d := byID[id]; d != nil {
			d.Confirmed = append(d.Confirmed, email)
		}
	}
	return rows.Err()
}

// VerifiedMemberEmails implements forms.Store.
func (s *Forms) VerifiedMemberEmails(ctx context.Context, orgID string, emails []string) ([]string, error) {
	if len(emails) == 0 {
		return nil, nil
	}
	args := []any{orgID}
	for _, e := range emails {
		args = append(args, e)
	}
	rows, err := s.r().QueryContext(ctx, `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1 AND u.email_verified AND u.email IN (`+placeholders(2, len(emails))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// AddRecipient implements forms.Store.
func (s *Forms) AddRecipient(ctx context.Context, r *forms.Recipient) error {
	var hash *string
	if r.TokenHash != "" {
		hash = &r.TokenHash
	}
	var confirmed *int64
	if r.ConfirmedAt != nil {
		at := micros(*r.ConfirmedAt)
		confirmed = &at
	}
	var mailed *int64
	if r.MailedAt != nil {
		at := micros(*r.MailedAt)
		mailed = &at
	}
	_, err := s.w().ExecContext(ctx, `INSERT INTO form_recipients (destination_id, email, org_id, token_hash, expires_at, confirmed_at, mailed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.DestinationID, r.Email, r.OrgID, hash, micros(r.ExpiresAt), confirmed, mailed)
	return s.db.dialect.translate(err)
}

// ConfirmRecipient implements forms.Store: one conditional UPDATE, so a
// link confirms once however many times it is posted at once.
func (s *Forms) ConfirmRecipient(ctx context.Context, tokenHash string, at time.Time) (*forms.Recipient, error) {
	r := forms.Recipient{ConfirmedAt: &at}
	var expires int64
	err := s.w().QueryRowContext(ctx, `UPDATE form_recipients SET confirmed_at = $2, token_hash = NULL
		WHERE token_hash = $1 AND confirmed_at IS NULL AND expires_at > $2
		RETURNING destination_id, email, expires_at`, tokenHash, micros(at)).Scan(&r.DestinationID, &r.Email, &expires)
	if err != nil {
		return nil, s.one(err)
	}
	r.ExpiresAt = fromMicros(expires)
	if err := s.w().QueryRowContext(ctx, `SELECT form_id FROM form_destinations WHERE id = $1`, r.DestinationID).Scan(&r.FormID); err != nil {
		return nil, s.one(err)
	}
	return &r, nil
}

// DeleteDestination implements forms.Store.
func (s *Forms) DeleteDestination(ctx context.Context, formID, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM form_destinations WHERE id = $1 AND form_id = $2`, id, formID))
}
