-- +goose Up
-- A person's language for pages and mail (issue 30 item 10): "en" or "de";
-- NULL follows the browser's Accept-Language.
ALTER TABLE users ADD COLUMN language TEXT;

-- +goose Down
ALTER TABLE users DROP COLUMN language;
