-- +goose Up
-- Sign lifecycle (issue 12 item 5): a pending document whose expires_at
-- has passed is swept to status expired. The reminder, purge and legal
-- hold columns follow with their sweeps.
ALTER TABLE sign_documents ADD COLUMN expires_at BIGINT;
ALTER TABLE sign_documents ADD COLUMN expired_at BIGINT;
CREATE INDEX sign_documents_expiry ON sign_documents (status, expires_at);

-- +goose Down
DROP INDEX sign_documents_expiry;
ALTER TABLE sign_documents DROP COLUMN expired_at;
ALTER TABLE sign_documents DROP COLUMN expires_at;
