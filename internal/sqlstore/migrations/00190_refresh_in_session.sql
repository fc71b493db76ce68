-- +goose Up
-- A refresh token names its session ("<session id>.<secret>"), and the
-- session row holds the hash of its one live token: a refresh updates that
-- row in place, found by its primary key, and records the hash it rotated
-- away in refresh_history, a table with one index and no foreign key, so
-- the hottest write path no longer inserts into a two-index table checked
-- against sessions. refresh_history answers two questions: was this hash
-- one of the session's earlier tokens (reuse: revoke the session), and
-- which session does a token issued before this migration belong to (its
-- text names none; rotated_at is NULL while it is still the live one).
-- Rows past expires_at can never matter again and are pruned by a daily
-- schedule; that also clears the rows of deleted sessions.
ALTER TABLE sessions ADD COLUMN refresh_hash TEXT;
CREATE TABLE refresh_history (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    rotated_at BIGINT,
    expires_at BIGINT NOT NULL
);
INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at)
    SELECT token_hash, session_id, rotated_at, expires_at FROM refresh_tokens;
UPDATE sessions SET refresh_hash = (
    SELECT r.token_hash FROM refresh_tokens r
    WHERE r.session_id = sessions.id AND r.rotated_at IS NULL
    ORDER BY r.created_at DESC LIMIT 1);
DROP TABLE refresh_tokens;

-- +goose Down
CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    rotated_at BIGINT
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
-- When a rotated token was issued is not kept; its session's creation
-- stands in (nothing reads it).
INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at, rotated_at)
    SELECT h.token_hash, h.session_id, s.created_at, h.expires_at, h.rotated_at
    FROM refresh_history h JOIN sessions s ON s.id = h.session_id
    WHERE s.refresh_hash IS NULL OR s.refresh_hash <> h.token_hash;
INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at)
    SELECT refresh_hash, id, last_used_at, expires_at FROM sessions WHERE refresh_hash IS NOT NULL;
DROP TABLE refresh_history;
ALTER TABLE sessions DROP COLUMN refresh_hash;
