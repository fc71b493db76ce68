package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/forms"
)

// FormsTx implements forms.Store.
func (s *Store) FormsTx(ctx context.Context, fn func(tx forms.Store) error) error {
	return s.Tx(ctx, func(tx accounts.Store) error { return fn(tx.(*Store)) })
}

const formSelect = `SELECT f.id, f.org_id, f.name, f.autoresponder_enabled, f.autoresponder_subject, f.autoresponder_body, f.created_by, f.created_at,
		COALESCE((SELECT t.enabled FROM org_tools t WHERE t.org_id = f.org_id AND t.tool = 'forms'), TRUE)
	FROM forms f JOIN orgs o ON o.id = f.org_id AND o.deleted_at IS NULL`

func scanForm(row interface{ Scan(...any) error }) (*forms.Form, error) {
	var f forms.Form
	var created int64
	if err := row.Scan(&f.ID, &f.OrgID, &f.Name, &f.Autoresponder.Enabled, &f.Autoresponder.Subject, &f.Autoresponder.Body,
		&f.CreatedBy, &created, &f.Enabled); err != nil {
		return nil, err
	}
	f.Created = fromMicros(created)
	return &f, nil
}

// OrgLive implements forms.Store.
func (s *Store) OrgLive(ctx context.Context, orgID string) (bool, error) {
	o, err := s.OrgByID(ctx, orgID)
	if err == accounts.ErrNotFound {
		return false, nil
	}
	return err == nil && o.DeletedAt == nil, err
}

// LiveForm implements forms.Store.
func (s *Store) LiveForm(ctx context.Context, orgID, id string) (*forms.Form, error) {
	f, err := scanForm(s.r().QueryRowContext(ctx, formSelect+` WHERE f.id = $1 AND ($2 = '' OR f.org_id = $2)`, id, orgID))
	return f, s.one(err)
}

// CreateForm implements forms.Store.
func (s *Store) CreateForm(ctx context.Context, f *forms.Form) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO forms (id, org_id, name, autoresponder_enabled, autoresponder_subject, autoresponder_body, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		f.ID, f.OrgID, f.Name, f.Autoresponder.Enabled, f.Autoresponder.Subject, f.Autoresponder.Body, f.CreatedBy, micros(f.Created))
	return s.dialect.translate(err)
}

// ListForms implements forms.Store.
func (s *Store) ListForms(ctx context.Context, orgID string) ([]*forms.Form, error) {
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
func (s *Store) AddSubmission(ctx context.Context, sub *forms.Submission) error {
	data, err := json.Marshal(sub.Data)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO form_submissions (id, form_id, data, spam, created_at) VALUES ($1, $2, $3, $4, $5)`,
		sub.ID, sub.FormID, string(data), sub.Spam, micros(sub.Created))
	return s.dialect.translate(err)
}

// ListSubmissions implements forms.Store.
func (s *Store) ListSubmissions(ctx context.Context, formID string) ([]*forms.Submission, error) {
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
func (s *Store) AddDestination(ctx context.Context, d *forms.Destination) error {
	config, err := json.Marshal(map[string][]string{"to": d.To})
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO form_destinations (id, form_id, type, config, created_at) VALUES ($1, $2, $3, $4, $5)`,
		d.ID, d.FormID, d.Type, string(config), micros(d.Created))
	return s.dialect.translate(err)
}

// ListDestinations implements forms.Store.
func (s *Store) ListDestinations(ctx context.Context, formID string) ([]*forms.Destination, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, form_id, type, config, created_at FROM form_destinations
		WHERE form_id = $1 ORDER BY created_at, id`, formID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*forms.Destination{}
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
		d.To, d.Created = c.To, fromMicros(created)
		out = append(out, &d)
	}
	return out, rows.Err()
}

// DeleteDestination implements forms.Store.
func (s *Store) DeleteDestination(ctx context.Context, formID, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM form_destinations WHERE id = $1 AND form_id = $2`, id, formID))
}
