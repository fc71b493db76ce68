-- +goose Up
-- Revocation at once (issue 13 item 7): every revoking write records what
-- it revoked here, in its own transaction; each instance polls the rows of
-- the last hour into its in-memory list (internal/revocation) that every
-- bearer token is checked against. kind: session, key, user, org, member
-- (subject the user, org_id the org). Rows older than an access token's
-- life are pruned by a schedule.
CREATE TABLE revocations (
    kind    TEXT NOT NULL,
    subject TEXT NOT NULL,
    org_id  TEXT NOT NULL DEFAULT '',
    at      BIGINT NOT NULL
);
CREATE INDEX revocations_at ON revocations (at);

-- +goose Down
DROP TABLE revocations;
