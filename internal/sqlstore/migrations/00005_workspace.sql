-- +goose Up
-- The audit log is read newest first per org, optionally by tool or action,
-- with id breaking ties: each index ends in (at, id) so the read is one
-- backward index range scan, however large the log.
DROP INDEX audit_org_at;
DROP INDEX audit_org_tool_at;
DROP INDEX audit_org_action_at;
CREATE INDEX audit_org_at ON audit_log (org_id, at, id);
CREATE INDEX audit_org_tool_at ON audit_log (org_id, tool, at, id);
CREATE INDEX audit_org_action_at ON audit_log (org_id, action, at, id);

CREATE INDEX team_members_team_joined ON team_members (team_id, joined_at);
CREATE INDEX domains_domain ON domains (domain);

-- +goose Down
DROP INDEX domains_domain;
DROP INDEX team_members_team_joined;
DROP INDEX audit_org_action_at;
DROP INDEX audit_org_tool_at;
DROP INDEX audit_org_at;
CREATE INDEX audit_org_at ON audit_log (org_id, at);
CREATE INDEX audit_org_tool_at ON audit_log (org_id, tool, at);
CREATE INDEX audit_org_action_at ON audit_log (org_id, action, at);
