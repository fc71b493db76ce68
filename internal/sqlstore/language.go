package sqlstore

import (
	"context"
	"database/sql"
)

// MailLanguage implements the tools' stores (sign, forms): the language
// preference of the account whose address has the key emailKey, else of
// the account senderID (none when ""), else "" (the request's language).
// A tool's mail goes to addresses that may or may not be Gatehouse
// accounts.
func (c conn) MailLanguage(ctx context.Context, emailKey, senderID string) (string, error) {
	var lang sql.NullString
	err := c.r().QueryRowContext(ctx, `SELECT COALESCE(
		(SELECT language FROM users WHERE email_key = $1 AND language IS NOT NULL AND language <> ''),
		(SELECT language FROM users WHERE id = $2 AND language IS NOT NULL AND language <> ''), '')`,
		emailKey, nullString(senderID)).Scan(&lang)
	return lang.String, err
}
