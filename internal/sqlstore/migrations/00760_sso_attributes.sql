-- +goose Up
-- SSO attribute mapping (issue 27 item 3): per connection, the claim or
-- attribute names of the display name and of the groups, and the groups
-- mapped to teams of the connection's workspace, as JSON ('' for none).
ALTER TABLE sso_connections ADD COLUMN attributes TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sso_connections DROP COLUMN attributes;
