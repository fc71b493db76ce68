-- +goose Up
-- Covering indexes in the order the lists are read: the member list of an
-- org (joined_at, user_id) and a user's workspaces (joined_at, org_id) come
-- straight from the index with no sort and no table lookup for the role.
CREATE INDEX memberships_org_list ON memberships (org_id, joined_at, user_id, role);
CREATE INDEX memberships_user_list ON memberships (user_id, joined_at, org_id, role);
DROP INDEX memberships_org_joined;
DROP INDEX memberships_user;
-- The member list reads a person's card per row: one index probe instead of
-- the id index and then the table.
CREATE INDEX users_card ON users (id, name, email, avatar_url);

-- +goose Down
DROP INDEX users_card;
CREATE INDEX memberships_user ON memberships (user_id);
CREATE INDEX memberships_org_joined ON memberships (org_id, joined_at);
DROP INDEX memberships_user_list;
DROP INDEX memberships_org_list;
