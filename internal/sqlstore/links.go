package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/links"
)

const linkSelect = `SELECT l.id, l.org_id, l.short_code, l.destination_url, l.title, l.active, l.archived, l.clicks, l.created_by, l.created_at, l.updated_at
	FROM links l JOIN orgs o ON o.id = l.org_id AND o.deleted_at IS NULL`

func scanLink(row interface{ Scan(...any) error }) (*links.Link, error) {
	var l links.Link
	var created, updated int64
	if err := row.Scan(&l.ID, &l.OrgID, &l.ShortCode, &l.DestinationURL, &l.Title, &l.Active, &l.Archived, &l.Clicks,
		&l.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	l.Created, l.Modified = fromMicros(created), fromMicros(updated)
	return &l, nil
}

// CreateLink implements links.Store.
func (s *Links) CreateLink(ctx context.Context, l *links.Link) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO links (id, org_id, short_code, destination_url, title, active, archived, clicks, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10) ON CONFLICT DO NOTHING`,
		l.ID, l.OrgID, l.ShortCode, l.DestinationURL, l.Title, l.Active, l.Archived, l.CreatedBy, micros(l.Created), micros(l.Modified)))
}

// Link implements links.Store.
func (s *Links) Link(ctx context.Context, orgID, id string) (*links.Link, error) {
	l, err := scanLink(s.r().QueryRowContext(ctx, linkSelect+` WHERE l.id = $1 AND l.org_id = $2`, id, orgID))
	return l, s.one(err)
}

// ListLinks implements links.Store.
func (s *Links) ListLinks(ctx context.Context, orgID string) ([]*links.Link, error) {
	rows, err := s.r().QueryContext(ctx, linkSelect+` WHERE l.org_id = $1 ORDER BY l.created_at DESC, l.id DESC`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*links.Link{}
	for rows.Next() {
		l, err := scanLink(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// UpdateLink implements links.Store.
func (s *Links) UpdateLink(ctx context.Context, l *links.Link) error {
	return affected(s.w().ExecContext(ctx, `UPDATE links SET destination_url = $2, title = $3, active = $4, archived = $5, updated_at = $6 WHERE id = $1`,
		l.ID, l.DestinationURL, l.Title, l.Active, l.Archived, micros(l.Modified)))
}

// DeleteLink implements links.Store.
func (s *Links) DeleteLink(ctx context.Context, orgID, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM links WHERE id = $1 AND org_id = $2`, id, orgID))
}

// Follow implements links.Store: the counter and the click row are
// written together, so clicks always equals the rows counted; the
// statement that counts also reads the workspace's switch.
func (s *Links) Follow(ctx context.Context, code string, c *links.Click) (*links.Link, *bool, error) {
	var out *links.Link
	var switched sql.NullBool
	err := s.inTx(ctx, func(t conn) error {
		row := t.w().QueryRowContext(ctx, `UPDATE links SET clicks = clicks + 1, unreported_clicks = unreported_clicks + 1
			WHERE short_code = $1 AND active AND NOT archived AND org_id IN (SELECT id FROM orgs WHERE deleted_at IS NULL)
			RETURNING id, org_id, short_code, destination_url, title, active, archived, clicks, created_by, created_at, updated_at,
				(SELECT t.enabled FROM org_tools t WHERE t.org_id = links.org_id AND t.tool = 'links')`, code)
		l, err := scanLink(scanFunc(func(dest ...any) error { return row.Scan(append(dest, &switched)...) }))
		if err != nil {
			return t.one(err)
		}
		c.LinkID = l.ID
		if _, err := t.w().ExecContext(ctx, `INSERT INTO link_clicks (id, link_id, at) VALUES ($1, $2, $3)`, c.ID, c.LinkID, micros(c.At)); err != nil {
			return err
		}
		out = l
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, nullBool(switched), nil
}

// ClickLink implements links.Store.
func (s *Links) ClickLink(ctx context.Context, orgID, clickID string) (*links.Link, time.Time, error) {
	var at int64
	row := s.r().QueryRowContext(ctx, `SELECT l.id, l.org_id, l.short_code, l.destination_url, l.title, l.active, l.archived, l.clicks,
			l.created_by, l.created_at, l.updated_at, c.at
		FROM link_clicks c JOIN links l ON l.id = c.link_id
		JOIN orgs o ON o.id = l.org_id AND o.deleted_at IS NULL WHERE c.id = $1 AND l.org_id = $2`, clickID, orgID)
	l, err := scanLink(scanFunc(func(dest ...any) error { return row.Scan(append(dest, &at)...) }))
	if err != nil {
		return nil, time.Time{}, s.one(err)
	}
	return l, fromMicros(at), nil
}

// AddConversion implements links.Store.
func (s *Links) AddConversion(ctx context.Context, c *links.Conversion) error {
	var amount sql.NullInt64
	if c.AmountCents != nil {
		amount = sql.NullInt64{Int64: *c.AmountCents, Valid: true}
	}
	_, err := s.w().ExecContext(ctx, `INSERT INTO link_conversions (id, click_id, link_id, name, amount_cents, currency, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ID, c.ClickID, c.LinkID, c.Name, amount, nullString(c.Currency), micros(c.Created))
	if s.db.dialect.missingParent(err) {
		return gatehouse.ErrNotFound // the link (and its clicks) was deleted meanwhile
	}
	return s.db.dialect.translate(err)
}
