-- +goose Up
-- Webhooks of the Links (and later Sign) tool. The secret signs every
-- delivery (HMAC-SHA256), so it is kept as issued, unlike the hashed
-- credentials; it is shown once and cannot be read back through the API.
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    tool       TEXT NOT NULL,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    active     BOOLEAN NOT NULL DEFAULT TRUE,
    failures   INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_org ON webhooks (org_id, tool, created_at);

-- +goose Down
DROP TABLE webhooks;
