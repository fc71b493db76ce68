-- +goose Up
-- SCIM 2.0 provisioning (issue 28). A SCIM token is a workspace's bearer
-- secret for its directory (Okta, Entra): kept as its SHA-256 (hash), shown
-- once; a deleted token keeps its row (deleted_at) and is refused at once,
-- since every SCIM request reads its row.
CREATE TABLE scim_tokens (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    hash       TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    deleted_at BIGINT
);
CREATE UNIQUE INDEX scim_tokens_hash ON scim_tokens (hash);
CREATE INDEX scim_tokens_org ON scim_tokens (org_id, created_at) WHERE deleted_at IS NULL;

-- A directory user of a workspace, keyed by user_name (an email address,
-- user_name_key its ParseEmail key) and external_id. user_id is the
-- account it stands for: NULL while pending (an address outside the
-- workspace's verified domains, attached when someone proves it).
-- resource is the SCIM resource's other attributes as JSON.
CREATE TABLE scim_users (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_name     TEXT NOT NULL,
    user_name_key TEXT NOT NULL,
    external_id   TEXT NOT NULL,
    display_name  TEXT NOT NULL,
    active        BOOLEAN NOT NULL,
    user_id       TEXT REFERENCES users (id) ON DELETE SET NULL,
    resource      TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE UNIQUE INDEX scim_users_name ON scim_users (org_id, user_name_key);
CREATE INDEX scim_users_external ON scim_users (org_id, external_id);
CREATE INDEX scim_users_list ON scim_users (org_id, created_at, id);
CREATE INDEX scim_users_pending ON scim_users (user_name_key) WHERE user_id IS NULL;

-- +goose Down
DROP TABLE scim_users;
DROP TABLE scim_tokens;
