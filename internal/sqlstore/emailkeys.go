package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/gatehouse/gatehouse"
)

// emailKeyMigration is migration 00100, in Go because the key is computed
// by gatehouse.ParseEmail (IDNA): users get email_key, the unique column
// every sign-in looks addresses up by, while email keeps the address as
// typed. It replaces the unique index on email.
func emailKeyMigration() *goose.Migration {
	return goose.NewGoMigration(100, &goose.GoFunc{RunTx: emailKeysUp}, &goose.GoFunc{RunTx: emailKeysDown})
}

func emailKeysUp(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx,
		`ALTER TABLE users ADD COLUMN email_key TEXT NOT NULL DEFAULT ''`,
		`UPDATE users SET email_key = email`,
		`CREATE UNIQUE INDEX users_email_key ON users (email_key)`,
		`DROP INDEX users_email`,
	); err != nil {
		return err
	}
	return backfillEmailKeys(ctx, tx)
}

// backfillEmailKeys gives each account whose address is not ASCII the key
// ParseEmail computes. An ASCII address was stored lower-cased, so it is
// already its own key.
func backfillEmailKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, email FROM users WHERE length(email) <> octet_length(email) ORDER BY created_at, id`)
	if err != nil {
		return fmt.Errorf("read unicode addresses: %w", err)
	}
	var ids, keys []string
	for rows.Next() {
		var id, email string
		if err := rows.Scan(&id, &email); err != nil {
			rows.Close()
			return err
		}
		if key := gatehouse.EmailKey(email); key != email {
			ids, keys = append(ids, id), append(keys, key)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// An address whose key another account already holds (the same
	// mailbox registered twice under two spellings) keeps its old key, which
	// no new spelling reaches: the older account, or the one spelled as its
	// key, keeps the address.
	for i, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET email_key = $2 WHERE id = $1
			AND NOT EXISTS (SELECT 1 FROM users WHERE email_key = $2)`, id, keys[i]); err != nil {
			return fmt.Errorf("store email key: %w", err)
		}
	}
	return nil
}

func emailKeysDown(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`CREATE UNIQUE INDEX users_email ON users (email)`,
		`DROP INDEX users_email_key`,
		`ALTER TABLE users DROP COLUMN email_key`,
	)
}

func execAll(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
