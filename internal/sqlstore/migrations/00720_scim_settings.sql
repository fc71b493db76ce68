-- +goose Up
-- A workspace's SCIM settings (issue 28 item 3): the role its directory's
-- members are given when provisioned, reactivated or attached (never
-- owner; the domain checks it). No row: member.
CREATE TABLE scim_settings (
    org_id         TEXT PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    provision_role TEXT NOT NULL,
    updated_by     TEXT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- +goose Down
DROP TABLE scim_settings;
