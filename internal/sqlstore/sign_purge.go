package sqlstore

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/internal/tools/sign"
)

// purgeDue is the condition of a document whose retention has passed
// ($1: the latest end time that is due): ended at or before it, not held,
// not yet purged. One copy serves the listing and the conditional purge.
const purgeDue = `purged_at IS NULL AND NOT legal_hold AND (
	(status = 'completed' AND completed_at <= $1) OR (status = 'voided' AND voided_at <= $1) OR
	(status = 'declined' AND declined_at <= $1) OR (status = 'expired' AND expired_at <= $1))`

// PurgeableDocuments implements sign.Store.
func (s *Sign) PurgeableDocuments(ctx context.Context, endedBefore time.Time, limit int) ([][2]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, org_id FROM sign_documents WHERE `+purgeDue+` ORDER BY id LIMIT $2`,
		micros(endedBefore), limit)
	return idPairs(rows, err)
}

// PurgeDocument implements sign.Store: the document's UPDATE is
// conditional on purgeDue, so of two sweeps (or a sweep and a legal hold)
// one wins; only the winner clears the signing data. A recipient's token
// becomes "purged:" and its id: unique, never issued (issued tokens are
// base64url), and the token lookup skips purged documents anyway.
func (s *Sign) PurgeDocument(ctx context.Context, id string, endedBefore, now time.Time) (bool, error) {
	res, err := s.w().ExecContext(ctx, `UPDATE sign_documents SET file = '', purged_at = $3, updated_at = $3
		WHERE id = $2 AND `+purgeDue, micros(endedBefore), id, micros(now))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if _, err := s.w().ExecContext(ctx, `UPDATE sign_fields SET value = NULL WHERE document_id = $1`, id); err != nil {
		return false, err
	}
	_, err = s.w().ExecContext(ctx, `UPDATE sign_recipients SET token = 'purged:' || id, decline_reason = '' WHERE document_id = $1`, id)
	return err == nil, err
}

// SetLegalHold implements sign.Store.
func (s *Sign) SetLegalHold(ctx context.Context, id string, hold bool) error {
	return affected(s.w().ExecContext(ctx, `UPDATE sign_documents SET legal_hold = $2 WHERE id = $1`, id, hold))
}

var _ sign.Store = (*Sign)(nil)
