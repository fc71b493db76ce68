package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/maillimit"
)

// mailKeep is how long mail_sent rows are kept: past the longest window
// (a day) of any limit.
const mailKeep = 48 * time.Hour

// mailWhere selects the mail_sent rows of f's scope in its window.
func mailWhere(f maillimit.Filter) (string, []any) {
	col, id := "org_id", f.OrgID
	if f.SenderID != "" {
		col, id = "sender_id", f.SenderID
	}
	return ` FROM mail_sent WHERE kind = $1 AND ` + col + ` = $2 AND sent_at > $3`, []any{f.Kind, id, micros(f.Since)}
}

// CountMail implements maillimit.Counter for every module's store.
func (c conn) CountMail(ctx context.Context, f maillimit.Filter) (int, error) {
	where, args := mailWhere(f)
	var n int
	err := c.w().QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&n)
	return n, err
}

// MailAt implements maillimit.Counter.
func (c conn) MailAt(ctx context.Context, f maillimit.Filter, offset int) (time.Time, error) {
	where, args := mailWhere(f)
	var at int64
	err := c.w().QueryRowContext(ctx, `SELECT sent_at`+where+` ORDER BY sent_at LIMIT 1 OFFSET $4`, append(args, offset)...).Scan(&at)
	return fromMicros(at), c.one(err)
}

// RecordMail implements maillimit.Ledger: n rows in one statement, after
// pruning the workspace's rows of kind older than mailKeep.
func (c conn) RecordMail(ctx context.Context, kind, orgID, senderID string, at time.Time, n int) error {
	if n <= 0 {
		return nil
	}
	if _, err := c.w().ExecContext(ctx, `DELETE FROM mail_sent WHERE kind = $1 AND org_id = $2 AND sent_at < $3`,
		kind, orgID, micros(at.Add(-mailKeep))); err != nil {
		return err
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO mail_sent (kind, org_id, sender_id, sent_at) VALUES `)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("($1, $2, $3, $4)")
	}
	_, err := c.w().ExecContext(ctx, q.String(), kind, orgID, nullString(senderID), micros(at))
	return err
}

// LockSender implements sign.Store: it takes the account's row lock until
// the transaction ends (after the workspace's, the order invitations
// take) and tells whether its address is verified.
func (c conn) LockSender(ctx context.Context, userID string) (bool, error) {
	var verified bool
	err := c.w().QueryRowContext(ctx, `SELECT email_verified FROM users WHERE id = $1`+c.db.dialect.forUpdate, userID).Scan(&verified)
	return verified, c.one(err)
}
