-- +goose Up
-- Back-Channel Logout (issue 25 item 2): a grant made on the consent page
-- records the browser's sign-in session that approved it, so that signing
-- that session out tells the client (a logout token naming the grant's
-- sessions). '' for grants approved elsewhere (the device flow) or before
-- this column.
ALTER TABLE oauth_grants ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX oauth_grants_session ON oauth_grants (session_id) WHERE session_id <> '';
-- Deleting a workspace ends the grant sessions in it: found from here.
CREATE INDEX oauth_grants_org ON oauth_grants (org_id);

-- +goose Down
DROP INDEX oauth_grants_org;
DROP INDEX oauth_grants_session;
ALTER TABLE oauth_grants DROP COLUMN session_id;
