-- +goose Up
-- The Links tool (TOOLS.md): short links of a workspace, their clicks and
-- the conversions attributed to a click.

CREATE TABLE links (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    short_code      TEXT NOT NULL,
    destination_url TEXT NOT NULL,
    title           TEXT NOT NULL DEFAULT '',
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    archived        BOOLEAN NOT NULL DEFAULT FALSE,
    clicks          BIGINT NOT NULL DEFAULT 0,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
-- Short codes are global: the short-link URL has no workspace in it.
CREATE UNIQUE INDEX links_short_code ON links (short_code);
CREATE INDEX links_org ON links (org_id, created_at);

CREATE TABLE link_clicks (
    id      TEXT PRIMARY KEY,
    link_id TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    at      BIGINT NOT NULL
);
CREATE INDEX link_clicks_link ON link_clicks (link_id, at);

CREATE TABLE link_conversions (
    id           TEXT PRIMARY KEY,
    click_id     TEXT NOT NULL REFERENCES link_clicks (id) ON DELETE CASCADE,
    link_id      TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    amount_cents BIGINT,
    currency     TEXT,
    created_at   BIGINT NOT NULL
);
CREATE INDEX link_conversions_link ON link_conversions (link_id, created_at);

-- +goose Down
DROP TABLE link_conversions;
DROP TABLE link_clicks;
DROP TABLE links;
