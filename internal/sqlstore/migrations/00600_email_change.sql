-- +goose Up
-- Change of email address (issue 30 item 1): the link mailed to the new
-- address and the link mailed to the old one to undo the change are email
-- tokens of two more purposes, single use by the same conditional UPDATE.
-- A CHECK cannot be altered on SQLite, so the table is rebuilt as 00120
-- did (the same statements on both databases; nothing references it).
CREATE TABLE email_tokens_next (
    token_hash TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL CHECK (purpose IN ('magic_link', 'verify_email', 'password_reset', 'change_email', 'undo_email_change')),
    email      TEXT NOT NULL,
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
INSERT INTO email_tokens_next (token_hash, purpose, email, user_id, created_at, expires_at, used_at)
    SELECT token_hash, purpose, email, user_id, created_at, expires_at, used_at FROM email_tokens;
DROP TABLE email_tokens;
ALTER TABLE email_tokens_next RENAME TO email_tokens;
CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at);

-- +goose Down
CREATE TABLE email_tokens_prev (
    token_hash TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL CHECK (purpose IN ('magic_link', 'verify_email', 'password_reset')),
    email      TEXT NOT NULL,
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
INSERT INTO email_tokens_prev (token_hash, purpose, email, user_id, created_at, expires_at, used_at)
    SELECT token_hash, purpose, email, user_id, created_at, expires_at, used_at FROM email_tokens
    WHERE purpose NOT IN ('change_email', 'undo_email_change');
DROP TABLE email_tokens;
ALTER TABLE email_tokens_prev RENAME TO email_tokens;
CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at);
