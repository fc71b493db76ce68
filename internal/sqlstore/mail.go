package sqlstore

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/seal"
)

// WithMail returns a view of db whose stores can queue mail (QueueMail),
// sealed by s. The view shares db's pools; close db, not the view.
func (db *DB) WithMail(s *mail.Sealer) *DB {
	v := *db
	v.mail = s
	return &v
}

// WithWebhookSeal returns a view of db that seals the bodies of the webhook
// deliveries it queues with box (webhooks.Delivery.Seal), as its mail is.
func (db *DB) WithWebhookSeal(box *seal.Box) *DB {
	v := *db
	v.hooks = box
	return &v
}

// QueueMail queues m, sealed, as a mail job in c's transaction (or in a
// new one): it is sent once the transaction commits, and never if it
// rolls back. Every module's store has it.
func (c conn) QueueMail(ctx context.Context, m mail.Message) error {
	if c.db.mail == nil {
		return errors.New("queue mail: the store has no mail sealer (DB.WithMail)")
	}
	return c.insertJobs(ctx, []river.InsertManyParams{{Args: c.db.mail.Seal(m),
		InsertOpts: &river.InsertOpts{MaxAttempts: mail.MaxAttempts}}})
}

// PendingJobs counts the jobs of kind in db's queue not yet finished
// (waiting, running or waiting for a retry), for tests and shutdown.
func (db *DB) PendingJobs(ctx context.Context, kind string) (int, error) {
	return conn{db: db}.pendingJobs(ctx, kind)
}
