-- +goose Up
-- Abuse limits shared by a deployment's instances (issue 29 item 7): one
-- row per bucket, its key an HMAC of the limiter, the deployment and the
-- client IP or account (never the address itself), and tat the instant
-- (unix microseconds) the bucket is full again (GCRA). Rows whose tat has
-- passed are full buckets and are pruned. No index on tat: every take
-- updates it, and without one the update stays heap-only on PostgreSQL;
-- the minute's prune reads the few active rows.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);

-- +goose Down
DROP TABLE rate_limits;
