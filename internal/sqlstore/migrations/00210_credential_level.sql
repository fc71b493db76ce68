-- +goose Up
-- Keys and OAuth grants record the assurance level of the session that
-- made them (issue 23 item 3): their tokens carry it, and a workspace
-- that requires two-factor refuses those below aal2. Rows made before
-- this were made by sessions of unknown level: aal1.
ALTER TABLE api_keys ADD COLUMN aal TEXT NOT NULL DEFAULT 'aal1';
ALTER TABLE oauth_grants ADD COLUMN aal TEXT NOT NULL DEFAULT 'aal1';

-- +goose Down
ALTER TABLE oauth_grants DROP COLUMN aal;
ALTER TABLE api_keys DROP COLUMN aal;
