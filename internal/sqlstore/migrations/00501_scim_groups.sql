-- +goose Up
-- SCIM groups are teams (issue 28 item 4). A team a directory created is
-- managed: its membership follows the directory and is not edited by hand.
ALTER TABLE teams ADD COLUMN managed BOOLEAN NOT NULL DEFAULT FALSE;

-- The directory's side of a managed team: its externalId, and its members
-- as directory users (a pending or deactivated one is listed here and is
-- in the team once their account is a member).
CREATE TABLE scim_groups (
    team_id     TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    external_id TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX scim_groups_org ON scim_groups (org_id, created_at);

CREATE TABLE scim_group_members (
    team_id      TEXT NOT NULL REFERENCES scim_groups (team_id) ON DELETE CASCADE,
    scim_user_id TEXT NOT NULL REFERENCES scim_users (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, scim_user_id)
);
CREATE INDEX scim_group_members_user ON scim_group_members (scim_user_id);

-- +goose Down
DROP TABLE scim_group_members;
DROP TABLE scim_groups;
ALTER TABLE teams DROP COLUMN managed;
