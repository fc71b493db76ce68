-- +goose Up
-- Password recovery (issue 13 item 6): its emailed links are email tokens
-- of a third purpose, single use by the same conditional UPDATE. A CHECK
-- cannot be altered on SQLite, so the table is rebuilt (the same statements
-- on both databases; nothing references it).
CREATE TABLE email_tokens_next (
    token_hash TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL CHECK (purpose IN ('magic_link', 'verify_email', 'password_reset')),
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
    purpose    TEXT NOT NULL CHECK (purpose IN ('magic_link', 'verify_email')),
    email      TEXT NOT NULL,
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
INSERT INTO email_tokens_prev (token_hash, purpose, email, user_id, created_at, expires_at, used_at)
    SELECT token_hash, purpose, email, user_id, created_at, expires_at, used_at FROM email_tokens
    WHERE purpose <> 'password_reset';
DROP TABLE email_tokens;
ALTER TABLE email_tokens_prev RENAME TO email_tokens;
CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at);
