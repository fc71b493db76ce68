package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/webhooks"
)

const webhookSelect = `SELECT w.id, w.org_id, w.tool, w.url, w.events, w.secret, w.active, w.failures, w.created_by, w.created_at, w.updated_at
	FROM webhooks w JOIN orgs o ON o.id = w.org_id AND o.deleted_at IS NULL`

func scanWebhook(row interface{ Scan(...any) error }) (*webhooks.Webhook, error) {
	var w webhooks.Webhook
	var events string
	var created, updated int64
	if err := row.Scan(&w.ID, &w.OrgID, &w.Tool, &w.URL, &events, &w.Secret, &w.Active, &w.Failures, &w.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, err
	}
	w.Created, w.Modified = fromMicros(created), fromMicros(updated)
	return &w, nil
}

// CreateWebhook implements webhooks.Store.
func (s *Webhooks) CreateWebhook(ctx context.Context, w *webhooks.Webhook) error {
	events, _ := json.Marshal(w.Events)
	_, err := s.w().ExecContext(ctx, `INSERT INTO webhooks (id, org_id, tool, url, events, secret, active, failures, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10)`,
		w.ID, w.OrgID, w.Tool, w.URL, string(events), w.Secret, w.Active, w.CreatedBy, micros(w.Created), micros(w.Modified))
	return s.db.dialect.translate(err)
}

// Webhook implements webhooks.Store. Outside a transaction, concurrent
// reads of one webhook share a query (sharedReads): every delivery try
// reads its webhook.
func (s *Webhooks) Webhook(ctx context.Context, orgID, tool, id string) (*webhooks.Webhook, error) {
	const q = webhookSelect + ` WHERE w.id = $1 AND w.org_id = $2 AND w.tool = $3`
	if s.tx != nil {
		w, err := scanWebhook(s.r().QueryRowContext(ctx, q, id, orgID, tool))
		return w, s.one(err)
	}
	v, err := s.db.webhookReads.do(ctx, s.db.rgate, orgID+"/"+tool+"/"+id, func(ctx context.Context) (any, error) {
		return scanWebhook(s.db.stmts.on(s.db.reader, nil).QueryRowContext(ctx, q, id, orgID, tool))
	})
	if err != nil {
		return nil, s.one(err)
	}
	w := *v.(*webhooks.Webhook) // each caller its own copy
	return &w, nil
}

// ListWebhooks implements webhooks.Store.
func (s *Webhooks) ListWebhooks(ctx context.Context, orgID, tool string) ([]*webhooks.Webhook, error) {
	rows, err := s.r().QueryContext(ctx, webhookSelect+` WHERE w.org_id = $1 AND w.tool = $2 ORDER BY w.created_at, w.id`, orgID, tool)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*webhooks.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// UpdateWebhook implements webhooks.Store.
func (s *Webhooks) UpdateWebhook(ctx context.Context, w *webhooks.Webhook) error {
	events, _ := json.Marshal(w.Events)
	return affected(s.w().ExecContext(ctx, `UPDATE webhooks SET url = $2, events = $3, active = $4, failures = $5, updated_at = $6 WHERE id = $1`,
		w.ID, w.URL, string(events), w.Active, w.Failures, micros(w.Modified)))
}

// DeleteWebhook implements webhooks.Store.
func (s *Webhooks) DeleteWebhook(ctx context.Context, orgID, tool, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM webhooks WHERE id = $1 AND org_id = $2 AND tool = $3`, id, orgID, tool))
}

// DeliveryResult implements webhooks.Store: one conditional UPDATE, so
// concurrent deliveries count every failure.
func (s *Webhooks) DeliveryResult(ctx context.Context, id string, ok bool, disableAfter int) error {
	if ok {
		_, err := s.w().ExecContext(ctx, `UPDATE webhooks SET failures = 0 WHERE id = $1 AND failures <> 0`, id)
		return err
	}
	_, err := s.w().ExecContext(ctx, `UPDATE webhooks SET failures = failures + 1,
		active = CASE WHEN failures + 1 >= $2 THEN FALSE ELSE active END WHERE id = $1`, id, disableAfter)
	return err
}

// CountWebhooks implements webhooks.Store. On PostgreSQL a transaction
// first takes a lock on (tool, createdBy) held until it ends, so two
// creations by one person, on any instance, count one after the other
// (READ COMMITTED alone lets both count 9 and insert the 10th and 11th).
// SQLite's write transactions are serialized already.
func (s *Webhooks) CountWebhooks(ctx context.Context, tool, createdBy string) (int, error) {
	if s.tx != nil {
		if err := s.db.dialect.lockKey(ctx, s.w(), "webhooks/"+tool+"/"+createdBy); err != nil {
			return 0, err
		}
	}
	var n int
	err := s.w().QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE tool = $1 AND created_by = $2`, tool, createdBy).Scan(&n)
	return n, err
}

// CountOrgWebhooks implements webhooks.Store, with CountWebhooks' lock on
// (org, tool).
func (s *Webhooks) CountOrgWebhooks(ctx context.Context, orgID, tool string) (int, error) {
	if s.tx != nil {
		if err := s.db.dialect.lockKey(ctx, s.w(), "webhooks/org/"+orgID+"/"+tool); err != nil {
			return 0, err
		}
	}
	var n int
	err := s.w().QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE org_id = $1 AND tool = $2`, orgID, tool).Scan(&n)
	return n, err
}

// EnqueueDeliveries implements webhooks.Store.
func (s *Webhooks) EnqueueDeliveries(ctx context.Context, ds []*webhooks.Delivery) error {
	jobs := make([]river.InsertManyParams, len(ds))
	for i, d := range ds {
		jobs[i] = river.InsertManyParams{Args: d.Seal(s.db.hooks), InsertOpts: &river.InsertOpts{MaxAttempts: d.Tries}}
	}
	return s.insertJobs(ctx, jobs)
}

// PendingDeliveries implements webhooks.Store.
func (s *Webhooks) PendingDeliveries(ctx context.Context) (int, error) {
	return s.pendingJobs(ctx, webhooks.DeliveryKind)
}
