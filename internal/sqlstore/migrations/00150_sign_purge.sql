-- +goose Up
-- Sign retention (issue 12 item 5): a completed, voided, declined or
-- expired document is purged (its PDF and signing data) once the
-- retention setting has passed since it ended, unless the owner holds it.
-- Its scheduledPurgeAt is computed from the end time and the setting, so
-- a changed setting applies to every document; purged_at marks the
-- tombstone that stays listed.
ALTER TABLE sign_documents ADD COLUMN legal_hold BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sign_documents ADD COLUMN purged_at BIGINT;

-- +goose Down
ALTER TABLE sign_documents DROP COLUMN purged_at;
ALTER TABLE sign_documents DROP COLUMN legal_hold;
