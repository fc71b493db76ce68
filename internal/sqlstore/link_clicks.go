package sqlstore

import (
	"context"

	"github.com/gatehouse/gatehouse/internal/tools/links"
)

// UnreportedLinks implements links.Store (the partial index of migration
// 00151 holds just these links).
func (s *Links) UnreportedLinks(ctx context.Context, limit int) ([]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT l.id FROM links l JOIN orgs o ON o.id = l.org_id AND o.deleted_at IS NULL
		WHERE l.unreported_clicks > 0 ORDER BY l.id LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ClaimClicks implements links.Store. The row lock (PostgreSQL; SQLite's
// one writer) holds back the redirect's counting UPDATE and any other
// claim until the transaction ends, so what it takes off is what it
// reports.
func (s *Links) ClaimClicks(ctx context.Context, id string) (*links.Link, int64, error) {
	l := &links.Link{ID: id}
	var n int64
	err := s.r().QueryRowContext(ctx, `SELECT org_id, short_code, clicks, unreported_clicks FROM links WHERE id = $1`+s.db.dialect.forUpdate,
		id).Scan(&l.OrgID, &l.ShortCode, &l.Clicks, &n)
	if err != nil {
		return nil, 0, s.one(err)
	}
	if n == 0 {
		return l, 0, nil
	}
	if err := affected(s.w().ExecContext(ctx, `UPDATE links SET unreported_clicks = unreported_clicks - $2 WHERE id = $1`, id, n)); err != nil {
		return nil, 0, err
	}
	return l, n, nil
}
