-- +goose Up
-- An account's security activity (issue 30 item 6) reads the entries about
-- one person across every workspace: by actor and by target, newest first.
CREATE INDEX audit_actor_at ON audit_log (actor_id, at, id);
CREATE INDEX audit_target_at ON audit_log (target_id, at, id);

-- +goose Down
DROP INDEX audit_target_at;
DROP INDEX audit_actor_at;
