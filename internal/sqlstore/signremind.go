package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/internal/tools/sign"
)

// remindDue is the condition of a document due for a reminder round at
// $2 (microseconds): pending, with reminders, fewer than
// sign.MaxReminderRounds rounds sent, autoRemindDays past its last round
// or, before the first, its sending, and not postponed past $2.
var remindDue = `status = $1 AND auto_remind_days > 0 AND sent_at IS NOT NULL
	AND reminder_rounds < ` + strconv.Itoa(sign.MaxReminderRounds) + ` AND (remind_after IS NULL OR remind_after <= $2)
	AND COALESCE(last_reminded_at, sent_at) + auto_remind_days * CAST(86400000000 AS BIGINT) <= $2`

// DueReminders implements sign.Store.
func (s *Sign) DueReminders(ctx context.Context, now time.Time, limit int) ([][2]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, org_id FROM sign_documents WHERE `+remindDue+`
		ORDER BY id LIMIT $3`, sign.Pending, micros(now), limit)
	return idPairs(rows, err)
}

// idPairs reads rows of two strings (a document's id and org) and closes
// them; err is the query's.
func idPairs(rows *sql.Rows, err error) ([][2]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var d [2]string
		if err := rows.Scan(&d[0], &d[1]); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClaimReminder implements sign.Store: the UPDATE repeats the due
// condition, so of two sweeps at once only one changes the row.
func (s *Sign) ClaimReminder(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.w().ExecContext(ctx, `UPDATE sign_documents SET last_reminded_at = $2, reminder_rounds = reminder_rounds + 1,
		remind_after = NULL WHERE `+remindDue+` AND id = $3`, sign.Pending, micros(now), id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PostponeReminder implements sign.Store, on the same condition as
// ClaimReminder.
func (s *Sign) PostponeReminder(ctx context.Context, id string, now, until time.Time) (bool, error) {
	res, err := s.w().ExecContext(ctx, `UPDATE sign_documents SET remind_after = $3 WHERE `+remindDue+` AND id = $4`,
		sign.Pending, micros(now), micros(until), id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
