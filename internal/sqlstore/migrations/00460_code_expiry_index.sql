-- +goose Up
-- Every authorization and device authorization deletes the codes expired
-- for a day before inserting its own; without an index on expires_at that
-- delete read the whole table each time (13,000 authorizations scanned 84
-- million rows in the code-exchange bench).
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);
CREATE INDEX oauth_device_codes_expires ON oauth_device_codes (expires_at);

-- +goose Down
DROP INDEX oauth_device_codes_expires;
DROP INDEX oauth_codes_expires;
