-- +goose Up
-- Links click batches across instances (issue 12 item 4): the redirect's
-- one UPDATE counts a click in clicks and in unreported_clicks; the
-- link_clicks schedule turns each link's unreported clicks into one
-- link.clicked event per window and takes them off, in one transaction.
ALTER TABLE links ADD COLUMN unreported_clicks BIGINT NOT NULL DEFAULT 0;
CREATE INDEX links_unreported ON links (id) WHERE unreported_clicks > 0;

-- +goose Down
DROP INDEX links_unreported;
ALTER TABLE links DROP COLUMN unreported_clicks;
