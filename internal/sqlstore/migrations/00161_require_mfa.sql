-- +goose Up
-- A team org may require two-factor of its members (issue 13 item 5).
ALTER TABLE orgs ADD COLUMN require_mfa BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE orgs DROP COLUMN require_mfa;
