-- +goose Up
-- Deleting an org clears every user's default_org_id pointing at it.
CREATE INDEX users_default_org ON users (default_org_id);

-- +goose Down
DROP INDEX users_default_org;
