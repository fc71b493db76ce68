-- +goose Up
-- Forms mail limits (issue 10 item 4): an email destination's address
-- gets submissions only once confirmed, and autoresponses are counted per
-- form per hour.

-- One row per address of an email destination. confirmed_at is set at
-- creation for a member's verified address, else when its recipient opens
-- the link mailed to it (token_hash, SHA-256 hex, cleared once used;
-- mailed_at, when that link was sent, counts toward the workspace's daily
-- cap of confirmation mails).
CREATE TABLE form_recipients (
    destination_id TEXT NOT NULL REFERENCES form_destinations (id) ON DELETE CASCADE,
    email          TEXT NOT NULL,
    org_id         TEXT NOT NULL,
    token_hash     TEXT,
    expires_at     BIGINT NOT NULL,
    confirmed_at   BIGINT,
    mailed_at      BIGINT,
    PRIMARY KEY (destination_id, email)
);
CREATE UNIQUE INDEX form_recipients_token ON form_recipients (token_hash);
CREATE INDEX form_recipients_mailed ON form_recipients (org_id, mailed_at) WHERE mailed_at IS NOT NULL;

-- When the submission's autoresponse was sent (NULL: none).
ALTER TABLE form_submissions ADD COLUMN autoresponded_at BIGINT;
CREATE INDEX form_submissions_autoresponded ON form_submissions (form_id, autoresponded_at)
    WHERE autoresponded_at IS NOT NULL;

-- +goose Down
DROP INDEX form_submissions_autoresponded;
ALTER TABLE form_submissions DROP COLUMN autoresponded_at;
DROP INDEX form_recipients_mailed;
DROP TABLE form_recipients;
