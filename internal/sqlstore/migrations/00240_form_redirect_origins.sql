-- +goose Up
-- The https origins a form's owner lets a submission's _next lead to,
-- space-separated ("https://example.com https://shop.example.com:8443");
-- empty: _next is never followed (issue 24 item 3).
ALTER TABLE forms ADD COLUMN redirect_origins TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE forms DROP COLUMN redirect_origins;
